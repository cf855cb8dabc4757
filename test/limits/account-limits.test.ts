// Per-account limits (issue 16): sessions running at once and started per minute, identities
// training at once and per hour. Past a limit: 429 with Retry-After and {"detail"}, nothing
// made, nothing charged. Counted in the database under the account's row lock, so parallel
// requests cannot all pass; the operator sets an account's own limits (`likeness limits set`).
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import * as fx from '../fixtures/index.ts';
import { file, identityForm } from '../support/forms.ts';
import { ENGINES, type TestAccount } from '../support/service.ts';
import { suiteService } from '../support/suite-service.ts';
import { eventually } from '../support/visitor.ts';

describe.each(ENGINES)('account limits on %s', (engine) => {
  // Service defaults: 2 sessions at once, 4 starts a minute, 1 training at once, 3 an hour.
  const suite = suiteService(engine, {
    livekit: 'local',
    env: {
      LIMIT_CONCURRENT_SESSIONS: '2',
      LIMIT_SESSION_STARTS_PER_MINUTE: '4',
      LIMIT_CONCURRENT_IDENTITY_CREATES: '1',
      LIMIT_IDENTITY_CREATES_PER_HOUR: '3',
      CREDITS_PER_AVATAR_MINUTE: '10',
      CREDITS_ONBOARDING: '10',
    },
  });

  const start = (account: TestAccount) =>
    account.call('POST', '/v1/sessions/start', { body: '{}', headers: { 'content-type': 'application/json' } });
  const end = (account: TestAccount, room: string) => account.call('POST', `/v1/sessions/${room}/end`);

  async function expect429(response: Response, mentions: string): Promise<number> {
    expect(response.status).toBe(429);
    const wait = Number(response.headers.get('retry-after'));
    expect(Number.isInteger(wait) && wait >= 1).toBe(true);
    const body = (await response.json()) as { detail: string };
    expect(body.detail).toContain(mentions);
    return wait;
  }

  describe('sessions', () => {
    test('of eight parallel starts exactly the limit of two runs; the others get 429; ending one frees a place', async () => {
      const account = await suite.service.account({ credits: 1000 });
      const rooms = () => suite.service.services.livekit.rooms.listRooms().then((list) => list.length);
      const roomsBefore = await rooms();
      const answers = await Promise.all(Array.from({ length: 8 }, () => start(account)));
      const started = answers.filter((r) => r.status === 200);
      expect(started).toHaveLength(2);
      for (const refused of answers.filter((r) => r.status !== 200)) await expect429(refused, '2 sessions running');
      // Nothing left of the refused ones: no room, no hold, no row.
      expect(await rooms()).toBe(roomsBefore + 2);
      const listed = (await (await account.call('GET', '/v1/sessions')).json()) as unknown[];
      expect(listed).toHaveLength(2);
      const [first] = (await Promise.all(started.map((r) => r.json()))) as Array<{ room_name: string }>;
      expect((await end(account, first!.room_name)).status).toBe(200);
      expect((await start(account)).status).toBe(200);
    }, 60_000);

    test('starts per minute: the fifth in a minute gets 429, with how long until the oldest leaves the window', async () => {
      const account = await suite.service.account({ credits: 1000 });
      for (let i = 0; i < 4; i++) {
        const response = await start(account);
        expect(response.status).toBe(200);
        await end(account, ((await response.json()) as { room_name: string }).room_name);
      }
      const wait = await expect429(await start(account), '4 sessions in the last minute');
      expect(wait).toBeLessThanOrEqual(60);
      expect(wait).toBeGreaterThan(50);
    }, 60_000);

    test('the limits are each account’s own: another account starts while this one is full', async () => {
      const full = await suite.service.account({ credits: 1000 });
      const other = await suite.service.account({ credits: 1000 });
      for (let i = 0; i < 2; i++) expect((await start(full)).status).toBe(200);
      await expect429(await start(full), 'sessions running');
      expect((await start(other)).status).toBe(200);
    }, 60_000);

    test('the operator raises one account’s limit with the CLI; the service counts by it at once', async () => {
      const account = await suite.service.account({ credits: 1000 });
      for (let i = 0; i < 2; i++) expect((await start(account)).status).toBe(200);
      await expect429(await start(account), 'sessions running');
      // The CLI in its own process, as an operator runs it: it finds the running service and
      // goes through its admin endpoint.
      const cli = async (...args: string[]) => {
        const child = Bun.spawn(['bun', join(import.meta.dir, '../../src/cli/index.ts'), ...args], {
          env: {
            ...process.env,
            DATA_DIR: suite.service.dataDir,
            ...(suite.service.config.databaseUrl ? { DATABASE_URL: suite.service.config.databaseUrl } : {}),
          },
          stdout: 'pipe',
          stderr: 'inherit',
        });
        const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
        expect(code).toBe(0);
        return out.trim();
      };
      await cli('limits', 'set', '--account', account.accountId, '--concurrent-sessions', '3');
      const shown = JSON.parse(await cli('limits', 'show', '--account', account.accountId)) as {
        limits: Record<string, number>;
        own: Record<string, number>;
      };
      expect(shown.own).toEqual({ concurrent_sessions: 3 });
      expect(shown.limits.concurrent_sessions).toBe(3);
      expect((await start(account)).status).toBe(200);
      await expect429(await start(account), '3 sessions running');
    }, 60_000);
  });

  describe('identities', () => {
    const create = (account: TestAccount, fields: Record<string, string | Blob> = {}) =>
      identityForm({ language: 'en', ...fields }).then((body) => account.call('POST', '/v1/identities', { body }));

    test('one training at a time: of two parallel creates one trains, the other gets 429 and leaves nothing', async () => {
      const account = await suite.service.account({ credits: 1000 });
      const before = {
        identities: await suite.service.count('identities'),
        files: (await suite.service.assetKeys()).length,
      };
      const answers = await Promise.all([create(account), create(account)]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 429]);
      await expect429(answers.find((r) => r.status === 429)!, 'identities training');
      expect(await suite.service.count('identities')).toBe(before.identities + 1);
      const balance = (await suite.service.services.ledger.balance(account.accountId)) ?? 0;
      expect(balance).toBe(990); // one onboarding charged, not two
    }, 60_000);

    test('per hour, failed creates and retrains included; the fourth gets 429 before its upload is even decoded', async () => {
      const account = await suite.service.account({ credits: 1000 });
      const made = await create(account);
      expect(made.status).toBe(200);
      // A photo without a face is refused after decoding: it counts.
      expect((await create(account, { image: file(fx.noFaceJpeg(), 'landscape.jpg', 'image/jpeg') })).status).toBe(422);
      // A retrain is a training too.
      const { identity_id } = (await made.json()) as { identity_id: string };
      const retrain = await identityForm({ prompt: 'Again.' });
      retrain.delete('name');
      expect((await account.call('PATCH', `/v1/identities/${identity_id}`, { body: retrain })).status).toBe(202);
      // The retrain finishes (one training at a time): 1.5 s of sleep was too short under load (run 86).
      await eventually(
        async () =>
          ((await (await account.call('GET', `/v1/identities/${identity_id}`)).json()) as { status: string }).status ===
          'ready',
        30_000,
        'the retrain',
      );
      // Garbage instead of a photo: were it decoded, this would be 422.
      const wait = await expect429(
        await create(account, { image: file(new Uint8Array(1000), 'junk.png', 'image/png') }),
        '3 identities in the last hour',
      );
      expect(wait).toBeGreaterThan(3500);
    }, 60_000);

    test('credits are checked before the upload is decoded: an account that cannot pay gets 402 even for garbage', async () => {
      const broke = await suite.service.account({ credits: 0 });
      const response = await create(broke, { image: file(new Uint8Array(1000), 'junk.png', 'image/png') });
      expect(response.status).toBe(402);
    });
  });
});
