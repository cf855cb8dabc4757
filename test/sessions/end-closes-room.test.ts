// Sessions end to end on a real LiveKit server with the agent worker in the process and a
// real WebRTC visitor: joining, ending, leaving, nobody joining, time limits, and billing
// per minute from the avatar's first frame until credits run out.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { TrackKind } from '@livekit/rtc-node';
import type { Static } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import { accounts } from '../../src/accounts/schema.ts';
import type { SessionResponse } from '../../src/sessions/contract.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { createIdentity, startWhenAdmitted } from '../support/session-start.ts';
import { eventually, joinAsVisitor, type StartedSession, sessionEnded } from '../support/visitor.ts';

/** As GET /v1/sessions/{id} answers (its schema's type). */
type SessionBody = Static<typeof SessionResponse>;

describe('session lifecycle with the agent', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService('pglite', {
      livekit: 'local',
      agent: true,
      env: {
        CREDITS_ONBOARDING: '0',
        CREDITS_PER_AVATAR_MINUTE: '10',
        BILLING_INTERVAL_SECONDS: '2',
        SESSION_JOIN_TIMEOUT_SECONDS: '4',
        SESSION_SWEEP_INTERVAL_SECONDS: '1',
      },
    });
  });
  afterAll(() => service.stop());

  const setup = async (credits: number) => {
    const account = await service.account({ credits });
    const identity = await createIdentity(account, { language: 'en' });
    return { account, identity };
  };
  const start = async (account: TestAccount, body: Record<string, unknown>) => {
    // Right after another test's session its job may still hold a slot: a client tries again.
    const response = await startWhenAdmitted(account, body);
    expect(response.status).toBe(200);
    return (await response.json()) as StartedSession;
  };
  const read = async (account: TestAccount, id: string) =>
    (await (await account.call('GET', `/v1/sessions/${id}`)).json()) as SessionBody;
  const roomExists = async (name: string) => (await service.services.livekit.rooms.listRooms([name])).length > 0;

  test('ending a session the moment its visitor leaves answers 200, whichever closes the room first', async () => {
    const { account, identity } = await setup(1000);
    for (let i = 0; i < 3; i++) {
      const session = await start(account, { identity_id: identity.identity_id });
      const visitor = await joinAsVisitor(session);
      await eventually(() => visitor.tracks.find((t) => t.kind === TrackKind.KIND_VIDEO), 20_000, 'the avatar video');
      // As the console's End button does: leave, then end.
      await visitor.leave();
      const ended = await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      expect({ attempt: i, status: ended.status, body: await ended.text() }).toMatchObject({ attempt: i, status: 200 });
      expect(['ended_by_api', 'client_left']).toContain((await read(account, session.room_name)).end_reason!);
    }
  }, 120_000);

  test('a visitor joins and sees the agent; end disconnects everyone and closes the room; ending again is 200', async () => {
    const { account, identity } = await setup(1000);
    const session = await start(account, { identity_id: identity.identity_id });
    const visitor = await joinAsVisitor(session);
    await eventually(() => visitor.agent(), 20_000, 'the agent to join');
    const video = await eventually(
      () => visitor.tracks.find((t) => t.kind === TrackKind.KIND_VIDEO),
      20_000,
      'the avatar video',
    );
    expect(video).toBeDefined();

    const ended = await account.call('POST', `/v1/sessions/${session.room_name}/end`);
    expect(ended.status).toBe(200);
    expect(await ended.json()).toEqual({
      session_id: session.room_name,
      status: 'ended',
      identity_id: identity.identity_id,
      pipeline_id: 'builtin',
      mode: 'meeting_agent',
      metadata: expect.objectContaining({ end_reason: 'ended_by_api' }),
    });
    await visitor.disconnected;
    expect(await roomExists(session.room_name)).toBe(false);
    const again = await account.call('POST', `/v1/sessions/${session.room_name}/end`);
    expect(again.status).toBe(200);
    expect(((await again.json()) as any).metadata.end_reason).toBe('ended_by_api');
  }, 60_000);

  test('a session ended right after its start leaves no room behind (a late agent job does not recreate it)', async () => {
    const { account, identity } = await setup(1000);
    const sessions = [];
    for (let i = 0; i < 4; i++) {
      const session = await start(account, { identity_id: identity.identity_id });
      expect((await account.call('POST', `/v1/sessions/${session.room_name}/end`)).status).toBe(200);
      sessions.push(session.room_name);
    }
    await Bun.sleep(4_000);
    expect(await service.services.livekit.rooms.listRooms(sessions)).toEqual([]);
    // The worker still takes new sessions: the ended ones did not leave it full.
    const next = await start(account, { identity_id: identity.identity_id });
    const visitor = await joinAsVisitor(next, { audioOnly: true });
    await eventually(() => visitor.agent(), 20_000, 'the agent to join');
    await account.call('POST', `/v1/sessions/${next.room_name}/end`);
  }, 60_000);

  test('a visitor who leaves ends the session within 5 s', async () => {
    const { account, identity } = await setup(1000);
    const session = await start(account, { identity_id: identity.identity_id });
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    await eventually(() => visitor.agent(), 20_000, 'the agent to join');
    await eventually(async () => (await read(account, session.room_name)).joined_at, 5_000, 'the join to be recorded');
    const left = Date.now();
    await visitor.leave();
    const ended = await sessionEnded<SessionBody>(account, session.room_name, 5_000);
    expect(Date.now() - left).toBeLessThan(5_000);
    expect(ended.end_reason).toBe('client_left');
    await eventually(async () => !(await roomExists(session.room_name)), 10_000, 'the room to close');
  }, 60_000);

  test('a session nobody joins ends at the timeout and is never billed', async () => {
    const { account, identity } = await setup(100);
    const session = await start(account, { identity_id: identity.identity_id });
    expect(await service.services.ledger.balance(account.accountId)).toBe(90); // the hold
    const ended = await sessionEnded<SessionBody>(account, session.room_name, 15_000);
    expect(ended).toMatchObject({ end_reason: 'no_join', billed_minutes: 0, credits_charged: 0, joined_at: null });
    expect(await service.services.ledger.balance(account.accountId)).toBe(100);
    expect(await roomExists(session.room_name)).toBe(false);
  }, 60_000);

  test('with credits for 2 minutes: exactly 2 charged, the notice arrives, then the visitor is disconnected', async () => {
    const { account, identity } = await setup(20);
    const session = await start(account, { identity_id: identity.identity_id });
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    const reason = await Promise.race([visitor.disconnected, Bun.sleep(30_000).then(() => 'timeout')]);
    if (reason === 'timeout') {
      const state = {
        session: await read(account, session.room_name),
        ledger: await service.services.ledger.entries(account.accountId),
        notices: visitor.notices,
      };
      throw new Error(`the visitor was not disconnected within 30 s: ${JSON.stringify(state)}`);
    }
    expect(visitor.notices).toContainEqual({
      topic: 'likeness.notice',
      payload: { type: 'insufficient_credits', session_id: session.room_name },
    });
    const ended = await sessionEnded<SessionBody>(account, session.room_name, 5_000);
    expect(ended).toMatchObject({ end_reason: 'insufficient_credits', billed_minutes: 2, credits_charged: 20 });
    expect(ended.streaming_started_at).not.toBeNull();
    expect(await service.services.ledger.balance(account.accountId)).toBe(0);
    const minutes = (await service.services.ledger.entries(account.accountId)).filter(
      (e) => e.kind === 'session_minute',
    );
    expect(minutes.map((e) => e.reference).sort()).toEqual([
      `session:${session.room_name}:minute:0`,
      `session:${session.room_name}:minute:1`,
    ]);
  }, 60_000);

  test("a session ends at the account's maximum duration", async () => {
    const { account, identity } = await setup(10_000);
    await service.services.database.db
      .update(accounts)
      .set({ maxSessionSeconds: 5 })
      .where(eq(accounts.id, account.accountId));
    const session = await start(account, { identity_id: identity.identity_id });
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    await visitor.disconnected;
    const ended = await sessionEnded(account, session.room_name);
    expect(ended).toMatchObject({ status: 'ended', end_reason: 'max_duration' });
  }, 60_000);

  test("another account's session answers 404 for end and read", async () => {
    const { account, identity } = await setup(1000);
    const other = await service.account();
    const session = await start(account, { identity_id: identity.identity_id });
    for (const [method, path] of [
      ['POST', `/v1/sessions/${session.room_name}/end`],
      ['GET', `/v1/sessions/${session.room_name}`],
    ] as const) {
      const theirs = await other.call(method, path);
      const missing = await other.call(method, path.replace(session.room_name, 'ses_0000000000000000000000'));
      expect(theirs.status).toBe(404);
      expect(await theirs.json()).toEqual(await missing.json());
    }
    expect(await roomExists(session.room_name)).toBe(true);
    expect((await account.call('POST', `/v1/sessions/${session.room_name}/end`)).status).toBe(200);
  }, 60_000);
});
