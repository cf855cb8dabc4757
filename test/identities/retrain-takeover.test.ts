// Two API processes on one Postgres (docs/api.md#identities-update): a retrain running in one
// holds a lease on its identity, so the other's recovery never takes live work; once the first
// process dies, its lease runs out and the other resumes the retrain to the end.
import { afterAll, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as fx from '../fixtures/index.ts';
import { migratedDatabase } from '../support/database-templates.ts';
import { file, form, type IdentityBody, identityForm } from '../support/forms.ts';
import { readUntil, tempDir } from '../support/processes.ts';
import { startTestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';

const HANGING = join(import.meta.dir, '../support/hanging-service.ts');
const LEASE = { WORK_LEASE_SECONDS: '3', SESSION_SWEEP_INTERVAL_SECONDS: '1', RECOVERY_GRACE_SECONDS: '0' };
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

test("another process's live retrain is left alone; once that process dies, the survivor finishes it", async () => {
  // Migrated already: the first start on an empty database is test/db's.
  const databaseUrl = await migratedDatabase();
  const dataDir = await tempDir(dirs, 'likeness-takeover-');
  const first = Bun.spawn(['bun', HANGING], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      HANG_ON_TRAINING: '2',
      ...LEASE,
    },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const { url, api_key } = JSON.parse((await readUntil(first.stdout, '\n')).split('\n')[0]!) as {
    url: string;
    api_key: string;
  };
  const auth = { authorization: `Bearer ${api_key}` };
  const created = (await (
    await fetch(`${url}/v1/identities`, { method: 'POST', headers: auth, body: await identityForm() })
  ).json()) as IdentityBody;
  const accepted = await fetch(`${url}/v1/identities/${created.identity_id}`, {
    method: 'PATCH',
    headers: auth,
    body: form({ prompt: 'taken over', image: file(fx.portraitPng(), 'new.png') }),
  });
  expect(accepted.status).toBe(202);
  await eventually(
    () => existsSync(join(dataDir, 'training-hung')),
    30_000,
    'the retrain hanging in the first process',
  );

  // A second process on the same database and asset folder (as replicas share Postgres and S3),
  // sweeping every second with no grace at all.
  const second = await startTestService('postgres', { databaseUrl, dataDir, env: LEASE });
  try {
    const read = async () =>
      (await (
        await fetch(`${second.url}/v1/identities/${created.identity_id}`, { headers: auth })
      ).json()) as IdentityBody;
    // Three lease lengths: the first process keeps renewing, so nothing is taken.
    await Bun.sleep(9_000);
    expect((await read()).status).toBe('training');

    first.kill('SIGKILL');
    await first.exited;
    await eventually(async () => (await read()).status === 'ready', 20_000, 'the retrain taken over and done');
    const after = await read();
    expect(after).toMatchObject({ prompt: 'taken over', detail: null });
    expect(after.image).not.toBe(created.image);
  } finally {
    if (first.exitCode === null) first.kill('SIGKILL');
    await second.stopKeepingData();
  }
}, 90_000);
