// Asking for a recording (issue 43 point 1, 7 and 8; docs/api.md#recordings), over a real LiveKit on
// one engine (the routes and rules, not the engine, are the point): `record` and
// `recording_notice` on the start are validated like the other fields (422 naming the field;
// no room, row or hold left), the identity's `record_sessions` is the default, a publishable
// key's choice decides for its embed, GET shows it, the room's metadata carries it before anyone
// joins, the agent's dispatch carries it, a `recordings` row waits for the file, and a recorded
// minute is charged at its own price beside the avatar's (nothing for a test key).
import { describe, expect, test } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { RECORDING_NOTICE_MAX_CHARS } from '../../src/contract/index.ts';
import { creditLedger } from '../../src/credits/schema.ts';
import { recordings } from '../../src/recordings/schema.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { form } from '../support/forms.ts';
import { oneEngine, type TestAccount } from '../support/service.ts';
import { createIdentity, sessionRowCount } from '../support/session-start.ts';
import { suiteServiceWithIdentity } from '../support/suite-service.ts';
import { json } from '../support/webhooks.ts';

const AVATAR_MINUTE = 10;
const RECORDED_MINUTE = 3;
const SHOP = 'https://shop.example';

describe.each(oneEngine('pglite'))('asking for a recording on %s', (engine) => {
  const suite = suiteServiceWithIdentity(engine, {
    livekit: 'local',
    env: {
      CREDITS_ONBOARDING: '0',
      CREDITS_PER_AVATAR_MINUTE: String(AVATAR_MINUTE),
      CREDITS_PER_RECORDED_MINUTE: String(RECORDED_MINUTE),
      TRUSTED_PROXIES: '127.0.0.1',
    },
    credits: 10_000,
    identity: { language: 'en' },
  });

  const start = (body: unknown, as = suite.account) => as.call('POST', '/v1/sessions/start', json(body));
  const started = async (body: Record<string, unknown>, as = suite.account) => {
    const response = await start(body, as);
    expect(response.status).toBe(200);
    return (await response.json()) as { room_name: string; record: boolean };
  };
  const read = async (id: string) =>
    (await (await suite.account.call('GET', `/v1/sessions/${id}`)).json()) as Record<string, unknown>;
  const dispatchOf = async (room: string) => {
    const named = (await suite.service.services.livekit.dispatches.listDispatch(room)).filter((d) => d.agentName);
    return JSON.parse(named[0]!.metadata) as Record<string, unknown>;
  };
  const roomMetadataOf = async (room: string) => {
    const [found] = await suite.service.services.livekit.rooms.listRooms([room]);
    return JSON.parse(found!.metadata) as Record<string, unknown>;
  };
  const recordingRow = async (room: string) =>
    (await suite.service.services.database.db.select().from(recordings).where(eq(recordings.sessionId, room)))[0];
  const footprint = async () => ({
    rooms: (await suite.service.services.livekit.rooms.listRooms()).length,
    rows: await sessionRowCount(suite.service, suite.account.accountId),
    recordings: (await suite.service.services.database.db.select().from(recordings)).length,
    balance: await suite.service.services.ledger.balance(suite.account.accountId),
  });
  const setIdentityRecording = async (value: string) => {
    const response = await suite.account.call('PATCH', `/v1/identities/${suite.identity.identity_id}`, {
      body: form({ record_sessions: value }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as { record_sessions: boolean };
  };

  test.each<[string, Record<string, unknown>, string]>([
    ['record as a string', { record: 'yes' }, 'record'],
    ['record as a number', { record: 1 }, 'record'],
    [
      'recording_notice too long',
      { record: true, recording_notice: 'n'.repeat(RECORDING_NOTICE_MAX_CHARS + 1) },
      'recording_notice',
    ],
    [
      'recording_notice with a control character',
      { record: true, recording_notice: 'Recorded\u0007.' },
      'recording_notice',
    ],
    ['recording_notice as a number', { record: true, recording_notice: 7 }, 'recording_notice'],
    [
      'recording_notice without a recording',
      { record: false, recording_notice: 'This call is recorded.' },
      'recording_notice',
    ],
    [
      'recording_notice when the identity does not record',
      { recording_notice: 'This call is recorded.' },
      'recording_notice',
    ],
  ])('%s: 422 naming the field; no room, row, recording or hold', async (_, fields, field) => {
    const before = await footprint();
    const response = await start({ identity_id: suite.identity.identity_id, ...fields });
    expect(response.status).toBe(422);
    const detail = ((await response.json()) as { detail: { loc: unknown[] }[] }).detail;
    expect(detail[0]!.loc).toEqual(['body', field]);
    expect(await footprint()).toEqual(before);
  });

  test('record: true is shown, handed to the agent with its notice, carried by the room, and waits in `recordings`', async () => {
    const before = await footprint();
    const session = await started({
      identity_id: suite.identity.identity_id,
      record: true,
      recording_notice: '  This conversation is recorded.  ',
    });
    expect(session.record).toBe(true);
    // The first minute held is the avatar's and its recording's.
    expect((await footprint()).balance).toBe(before.balance! - AVATAR_MINUTE - RECORDED_MINUTE);
    const shown = await read(session.room_name);
    expect(shown.record).toBe(true);
    expect(shown.recording_notice).toBe('This conversation is recorded.');
    const dispatch = await dispatchOf(session.room_name);
    expect(dispatch.record).toBe(true);
    expect(dispatch.recording_notice).toBe('This conversation is recorded.');
    expect((await roomMetadataOf(session.room_name)).recording).toBe(true);
    expect(await recordingRow(session.room_name)).toMatchObject({
      accountId: suite.account.accountId,
      status: 'recording',
    });

    const plain = await started({ identity_id: suite.identity.identity_id });
    expect(plain.record).toBe(false);
    expect(await read(plain.room_name)).toMatchObject({ record: false, recording_notice: null });
    expect((await dispatchOf(plain.room_name)).record).toBe(false);
    expect((await roomMetadataOf(plain.room_name)).recording).toBeUndefined();
    expect(await recordingRow(plain.room_name)).toBeUndefined();
  });

  test("the identity's record_sessions is the default; the start's record decides over it", async () => {
    expect((await setIdentityRecording('true')).record_sessions).toBe(true);
    const shown = (await (await suite.account.call('GET', `/v1/identities/${suite.identity.identity_id}`)).json()) as {
      record_sessions: boolean;
    };
    expect(shown.record_sessions).toBe(true);
    try {
      expect((await started({ identity_id: suite.identity.identity_id })).record).toBe(true);
      const declined = await started({ identity_id: suite.identity.identity_id, record: false });
      expect(declined.record).toBe(false);
      expect(await recordingRow(declined.room_name)).toBeUndefined();
      // A notice alone is fine when the identity records.
      const noticed = await started({ identity_id: suite.identity.identity_id, recording_notice: 'Recorded.' });
      expect(await read(noticed.room_name)).toMatchObject({ record: true, recording_notice: 'Recorded.' });
      const refused = await suite.account.call('PATCH', `/v1/identities/${suite.identity.identity_id}`, {
        body: form({ record_sessions: 'sometimes' }),
      });
      expect(refused.status).toBe(422);
    } finally {
      await setIdentityRecording('false');
    }
  });

  test("a publishable key's record_sessions decides for its embed; null follows the identity", async () => {
    const makeKey = async (record_sessions?: boolean | null) => {
      const answer = await suite.account.call(
        'POST',
        '/v1/publishable-keys',
        json({
          allowed_origins: [SHOP],
          identity_ids: [suite.identity.identity_id],
          limits: { visitor_concurrent_sessions: 10, visitor_sessions_per_minute: 10 },
          ...(record_sessions !== undefined && { record_sessions }),
        }),
      );
      expect(answer.status).toBe(201);
      return (await answer.json()) as { publishable_key: string; publishable_key_id: string; record_sessions: unknown };
    };
    const embedStart = async (key: string) => {
      const response = await suite.service.call('POST', '/v1/embed/sessions', {
        body: JSON.stringify({ identity_id: suite.identity.identity_id }),
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', origin: SHOP },
      });
      expect(response.status).toBe(200);
      return (await response.json()) as { session_id: string; record: boolean };
    };
    const recording = await makeKey(true);
    expect(recording.record_sessions).toBe(true);
    const following = await makeKey();
    expect(following.record_sessions).toBeNull();

    const recorded = await embedStart(recording.publishable_key);
    expect(recorded.record).toBe(true);
    expect((await roomMetadataOf(recorded.session_id)).recording).toBe(true);
    expect((await embedStart(following.publishable_key)).record).toBe(false);

    await setIdentityRecording('true');
    try {
      expect((await embedStart(following.publishable_key)).record).toBe(true);
      const patched = await suite.account.call(
        'PATCH',
        `/v1/publishable-keys/${following.publishable_key_id}`,
        json({ record_sessions: false }),
      );
      expect(((await patched.json()) as { record_sessions: unknown }).record_sessions).toBe(false);
      expect((await embedStart(following.publishable_key)).record).toBe(false);
    } finally {
      await setIdentityRecording('false');
    }
  });

  test("a recorded minute is charged at its own price beside the avatar's, once; a test account's at nothing", async () => {
    const minuteOf = async (as: TestAccount, record: boolean, identityId: string) => {
      const session = await started({ identity_id: identityId, record }, as);
      const { report_url, report_token } = (await dispatchOf(session.room_name)) as Record<string, string>;
      const report = (body: unknown) =>
        fetch(report_url!, {
          method: 'POST',
          headers: { authorization: `Bearer ${report_token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect((await report({ type: 'avatar_streaming' })).status).toBe(200);
      for (let i = 0; i < 2; i++) expect((await report({ type: 'minute', index: 0 })).status).toBe(200);
      const entries = await suite.service.services.database.db
        .select({ kind: creditLedger.kind, amount: creditLedger.amount })
        .from(creditLedger)
        .where(and(eq(creditLedger.accountId, as.accountId)));
      const row = (
        await suite.service.services.database.db.select().from(sessions).where(eq(sessions.id, session.room_name))
      )[0]!;
      return { entries, row, room: session.room_name };
    };
    const recorded = await minuteOf(suite.account, true, suite.identity.identity_id);
    const minuteEntries = recorded.entries.filter((entry) => entry.kind.endsWith('minute'));
    expect(minuteEntries.filter((entry) => entry.kind === 'recorded_minute').length).toBeGreaterThanOrEqual(1);
    const mine = await suite.service.services.database.db
      .select({ kind: creditLedger.kind, amount: creditLedger.amount })
      .from(creditLedger)
      .where(eq(creditLedger.reference, `session:${recorded.room}:minute:0`));
    expect(mine.sort((a, b) => a.kind.localeCompare(b.kind))).toEqual([
      { kind: 'recorded_minute', amount: -RECORDED_MINUTE },
      { kind: 'session_minute', amount: -AVATAR_MINUTE },
    ]);
    expect(recorded.row).toMatchObject({ billedMinutes: 1, creditsCharged: AVATAR_MINUTE + RECORDED_MINUTE });

    const plain = await minuteOf(suite.account, false, suite.identity.identity_id);
    const plainEntries = await suite.service.services.database.db
      .select({ kind: creditLedger.kind })
      .from(creditLedger)
      .where(eq(creditLedger.reference, `session:${plain.room}:minute:0`));
    expect(plainEntries).toEqual([{ kind: 'session_minute' }]);
    expect(plain.row.creditsCharged).toBe(AVATAR_MINUTE);

    // The live account's test key, as `likeness keys create --test` makes it.
    const { api_key } = await suite.service.services.operations.createKey({
      account_id: suite.account.accountId,
      test: true,
    });
    const testAccount: TestAccount = {
      accountId: `acc_test_${suite.account.accountId.slice('acc_'.length)}`,
      apiKey: api_key,
      call: (method, path, init = {}) =>
        suite.service.call(method, path, { ...init, headers: { authorization: `Bearer ${api_key}`, ...init.headers } }),
    };
    const testIdentity = await createIdentity(testAccount, { language: 'en' });
    const free = await minuteOf(testAccount, true, testIdentity.identity_id);
    expect(free.row.creditsCharged).toBe(0);
    const usage = (await (await suite.account.call('GET', '/v1/usage')).json()) as {
      totals: { credits_spent: { recorded_minute: number } };
    };
    expect(usage.totals.credits_spent.recorded_minute).toBe(RECORDED_MINUTE);
  });
});
