// DATA_DIR holds people's faces and voices (issue 16): the service makes it this user's only
// (0700, even when it existed wider), and every folder and file it writes there too (0700,
// 0600): the stored photos and voice samples, their renditions, the admin token.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { chmod, mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import * as fx from '../fixtures/index.ts';
import { file, identityForm } from '../support/forms.ts';
import { startTestService, type TestService } from '../support/service.ts';

let service: TestService;
beforeAll(async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'likeness-private-'));
  await chmod(dataDir, 0o755); // as an operator's `mkdir data` leaves it
  service = await startTestService('pglite', { dataDir });
});
afterAll(() => service.stop());

async function walk(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    found.push(path);
    if (entry.isDirectory()) found.push(...(await walk(path)));
  }
  return found;
}

test('DATA_DIR is 0700 and what the service stores in it is 0600 (folders 0700)', async () => {
  const account = await service.account({ credits: 1000 });
  const created = await account.call('POST', '/v1/identities', {
    body: await identityForm({ language: 'en', audio: file(fx.wav({ seconds: 5 }), 'v.wav') }),
  });
  expect(created.status).toBe(200);
  const mode = async (path: string) => (await stat(path)).mode & 0o777;
  expect(await mode(service.dataDir)).toBe(0o700);
  // The embedded database was opened by the test harness before the service (its own umask).
  const paths = (await walk(service.dataDir)).filter((path) => !relative(service.dataDir, path).startsWith('pglite'));
  const files = [];
  for (const path of paths) {
    const info = await stat(path);
    if (info.isDirectory())
      expect([relative(service.dataDir, path), info.mode & 0o777]).toEqual([relative(service.dataDir, path), 0o700]);
    else {
      files.push(path);
      expect([relative(service.dataDir, path), info.mode & 0o777]).toEqual([relative(service.dataDir, path), 0o600]);
    }
  }
  // The photo, its renditions and the voice sample are among them.
  expect(files.some((path) => path.endsWith('voice.wav'))).toBe(true);
  expect(files.some((path) => path.endsWith('render.png'))).toBe(true);
});
