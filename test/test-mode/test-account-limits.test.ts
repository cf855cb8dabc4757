// A test key is no way around its live account (issue 41 point 5; docs/api.md#test-mode), on
// both engines through the real routes: the limits the operator set on the live account bind
// the test key, live and test sessions and trainings counted together; the fair share counts
// test sessions with the live ones; a test avatar session or identity, free as they are, is
// refused (402) while the live account could not pay a live one, and a voice-only test session
// (free live too) still starts. Agent workers are one heartbeat row, as admission reads them.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { accounts } from '../../src/accounts/schema.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { agentWorkers } from '../../src/workers/schema.ts';
import { file, identityForm } from '../support/forms.ts';
import { ENGINES, type TestAccount } from '../support/service.ts';
import { suiteService } from '../support/suite-service.ts';
import { json } from '../support/webhooks.ts';

const MINUTE = 20;
const ONBOARDING = 10;
const WORKER = 'heartbeat-row-worker';

describe.each(ENGINES)('a test key under its live account on %s', (engine) => {
  // No service-wide limits (0): whatever binds comes from the live account's own.
  const suite = suiteService(engine, {
    livekit: 'local',
    env: {
      SESSION_ADMISSION: 'workers',
      SESSION_RESERVED_PERCENT: '20',
      CREDITS_PER_AVATAR_MINUTE: String(MINUTE),
      CREDITS_ONBOARDING: String(ONBOARDING),
    },
    startTimeout: 60_000,
  });

  /** One live worker with this many slots, none taken. */
  const workerSlots = async (capacity: number) => {
    const row = {
      agentName: suite.service.config.livekit.agentName,
      capacity,
      runningJobs: 0,
      draining: false,
      seenAt: sql`now()`,
      expiresAt: sql`now() + interval '1 hour'`,
    };
    await suite.service.services.database.db
      .insert(agentWorkers)
      .values({ id: WORKER, ...row })
      .onConflictDoUpdate({ target: agentWorkers.id, set: row });
  };
  beforeEach(() => workerSlots(100));
  /** Every key a test used: their sessions are ended after it, passed or failed, so none holds a slot for the next. */
  const keys: TestAccount[] = [];
  /** The live account's test key, as `likeness keys create --test` makes it. */
  async function testKeyOf(live: TestAccount): Promise<TestAccount> {
    const { api_key } = await suite.service.services.operations.createKey({ account_id: live.accountId, test: true });
    const key: TestAccount = {
      accountId: `acc_test_${live.accountId.slice('acc_'.length)}`,
      apiKey: api_key,
      call: (method, path, init = {}) =>
        suite.service.call(method, path, { ...init, headers: { authorization: `Bearer ${api_key}`, ...init.headers } }),
    };
    keys.push(key);
    return key;
  }
  const start = (who: TestAccount, body: object = { avatar_enabled: false }) =>
    who.call('POST', '/v1/sessions/start', json(body));
  const started = async (who: TestAccount, body?: object) => {
    const response = await start(who, body);
    expect(response.status).toBe(200);
    return ((await response.json()) as { room_name: string }).room_name;
  };
  const end = (who: TestAccount, room: string) => who.call('POST', `/v1/sessions/${room}/end`);
  const account = async (credits: number) => {
    const made = await suite.service.account({ credits });
    keys.push(made);
    return made;
  };
  afterEach(async () => {
    for (const key of keys.splice(0)) {
      const listed = (await (await key.call('GET', '/v1/sessions?limit=100')).json()) as {
        session_id: string;
        status: string;
      }[];
      for (const s of listed) if (s.status === 'running') await end(key, s.session_id);
    }
  });

  async function refused(response: Response, status: number, mentions: string) {
    expect(response.status).toBe(status);
    expect(((await response.json()) as { detail: string }).detail).toContain(mentions);
  }
  const setLimits = (live: TestAccount, limits: Record<string, number>) =>
    suite.service.services.operations.setLimits({ account_id: live.accountId, limits });

  test('sessions at once: the live account’s own limit of 1 counts its test sessions, both ways', async () => {
    const live = await account(1000);
    const sandbox = await testKeyOf(live);
    await setLimits(live, { concurrent_sessions: 1 });
    const liveRoom = await started(live);
    await refused(await start(sandbox), 429, '1 sessions running');
    await end(live, liveRoom);
    const testRoom = await started(sandbox);
    await refused(await start(live), 429, '1 sessions running');
    await end(sandbox, testRoom);
  }, 60_000);

  test('starts per minute and the session length: the live account’s, for the test key too', async () => {
    const live = await account(1000);
    const sandbox = await testKeyOf(live);
    await setLimits(live, { session_starts_per_minute: 2 });
    // The live account's own maximum, shorter than a test session's (180 s), is the test session's too.
    await suite.service.services.database.db
      .update(accounts)
      .set({ maxSessionSeconds: 45 })
      .where(eq(accounts.id, live.accountId));
    await end(live, await started(live));
    const testRoom = await started(sandbox);
    const [row] = await suite.service.services.database.db.select().from(sessions).where(eq(sessions.id, testRoom));
    expect(row!.maxDurationSeconds).toBe(45);
    await end(sandbox, testRoom);
    await refused(await start(sandbox), 429, '2 sessions in the last minute');
    await refused(await start(live), 429, '2 sessions in the last minute');
  }, 60_000);

  test('identity trainings per hour: a live create counts for the test key, which gets 429 before decoding', async () => {
    const live = await account(1000);
    const sandbox = await testKeyOf(live);
    await setLimits(live, { identity_creates_per_hour: 1 });
    const junk = async () => identityForm({ image: file(new Uint8Array(1000), 'junk.png', 'image/png') });
    // Refused after reading the upload: it counts (test/limits/account-limits.test.ts).
    expect((await live.call('POST', '/v1/identities', { body: await junk() })).status).toBeOneOf([415, 422]);
    await refused(
      await sandbox.call('POST', '/v1/identities', { body: await junk() }),
      429,
      '1 identities in the last hour',
    );
  }, 60_000);

  test('the fair share: an account running sessions gets no reserved slot through its test key', async () => {
    const live = await account(1000);
    const sandbox = await testKeyOf(live);
    // Three slots, one (20 %, rounded up) kept for accounts that run none.
    await workerSlots(3);
    for (let i = 0; i < 2; i++) await started(live);
    await refused(await start(live), 429, 'kept for accounts that run none');
    await refused(await start(sandbox), 429, 'kept for accounts that run none');
    // An account that runs none still gets the kept slot.
    const other = await account(1000);
    await started(other);
  }, 60_000);

  test('credits: a free test avatar session or identity is refused while the live account could not pay a live one', async () => {
    // Enough for a test identity (ONBOARDING), not for an avatar's first minute (MINUTE).
    const live = await account(ONBOARDING);
    const sandbox = await testKeyOf(live);
    const made = await sandbox.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) });
    expect(made.status).toBe(200);
    const { identity_id } = (await made.json()) as { identity_id: string };
    await refused(await start(sandbox, { identity_id }), 402, 'live account could pay');
    // Voice-only sessions are free live too: the test one starts.
    await end(sandbox, await started(sandbox));
    // Once the live account could pay, the test session starts, and still costs nothing.
    await suite.service.services.operations.grantCredits({ account_id: live.accountId, amount: MINUTE - ONBOARDING });
    await end(sandbox, await started(sandbox, { identity_id }));
    expect(await suite.service.services.ledger.balance(live.accountId)).toBe(MINUTE);

    // An owner with nothing: no test identity either, refused before its upload is decoded.
    const broke = await testKeyOf(await account(0));
    const junk = await identityForm({ image: file(new Uint8Array(1000), 'junk.png', 'image/png') });
    await refused(await broke.call('POST', '/v1/identities', { body: junk }), 402, 'live account could pay');
  }, 90_000);
});
