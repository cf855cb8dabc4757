// What agent jobs report: each session has its own report token; each minute is charged once
// however often it is reported; an ended session takes no more reports; a session whose job
// never reports (nor joins, by LiveKit's webhook) ends as agent_unavailable.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import type { WebhookEvent } from 'livekit-server-sdk';
import { SessionLifecycle } from '../../src/sessions/lifecycle.ts';
import { sessions } from '../../src/sessions/schema.ts';
import type { IdentityBody } from '../support/forms.ts';
import { jobReportService } from '../support/job-session.ts';
import { ENGINES, type TestAccount, type TestService } from '../support/service.ts';
import { postSessionStart } from '../support/session-start.ts';
import { eventually } from '../support/visitor.ts';

describe.each(ENGINES)('agent job reports on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let identity: IdentityBody;
  beforeAll(async () => {
    // The background sweeper is slowed down so that only the test's own sweep() calls end sessions: a
    // background sweep landing inside a test would end its session first and make that call count 0.
    ({ service, account, identity } = await jobReportService(engine, {
      env: { CREDITS_PER_AVATAR_MINUTE: '10', SESSION_SWEEP_INTERVAL_SECONDS: '3600' },
      credits: 100,
    }));
  });
  afterAll(() => service.stop());

  /** A session and the report URL and token its dispatch carries, as the job would read them. */
  const startSession = async () => {
    const response = await postSessionStart(account, { identity_id: identity.identity_id });
    const { room_name } = (await response.json()) as { room_name: string };
    const [dispatch] = (await service.services.livekit.dispatches.listDispatch(room_name)).filter((d) => d.agentName);
    const metadata = JSON.parse(dispatch!.metadata) as { report_url: string; report_token: string; session_id: string };
    expect(metadata.session_id).toBe(room_name);
    expect(metadata.report_url).toBe(`${service.config.internalUrl}/internal/sessions/${room_name}/reports`);
    const report = (body: unknown, token = metadata.report_token, url = metadata.report_url) =>
      fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    return { id: room_name, report, token: metadata.report_token };
  };

  test('a report with another session’s token, or none, is refused', async () => {
    const a = await startSession();
    const b = await startSession();
    expect((await a.report({ type: 'minute', index: 0 }, b.token)).status).toBe(401);
    expect((await a.report({ type: 'minute', index: 0 }, '')).status).toBe(401);
    expect((await a.report({ type: 'minute', index: -1 })).status).toBe(422);
    expect((await a.report({ type: 'hours', index: 0 })).status).toBe(422);
    for (const s of [a, b]) await account.call('POST', `/v1/sessions/${s.id}/end`);
  });

  test('each minute is charged exactly once, however often it is reported', async () => {
    const session = await startSession();
    const before = (await service.services.ledger.balance(account.accountId))!;
    expect((await session.report({ type: 'avatar_streaming', at: new Date().toISOString() })).status).toBe(200);
    const reports = await Promise.all(Array.from({ length: 5 }, () => session.report({ type: 'minute', index: 0 })));
    expect(reports.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const bodies = await Promise.all(reports.map((r) => r.json() as Promise<{ charged: boolean }>));
    expect(bodies.filter((b) => b.charged)).toHaveLength(1);
    expect(await session.report({ type: 'minute', index: 1 }).then((r) => r.json())).toEqual({
      ok: true,
      charged: true,
    });
    // The hold (10) went back with the first minute: two minutes cost 20 net of it.
    expect(await service.services.ledger.balance(account.accountId)).toBe(before + 10 - 20);
    const read = (await (await account.call('GET', `/v1/sessions/${session.id}`)).json()) as Record<string, unknown>;
    expect(read).toMatchObject({ billed_minutes: 2, credits_charged: 20 });
    expect(read.streaming_started_at).not.toBeNull();
    expect(read.joined_at).not.toBeNull(); // a billed minute means the visitor was in
    await account.call('POST', `/v1/sessions/${session.id}/end`);
    expect((await session.report({ type: 'minute', index: 2 })).status).toBe(409);
    // A report that read the session as running just before it ended: the charge checks again.
    const balance = await service.services.ledger.balance(account.accountId);
    expect(await service.services.billing.chargeMinute(session.id, 2)).toBe('ended');
    expect(await service.services.ledger.balance(account.accountId)).toBe(balance);
    expect(
      ((await (await account.call('GET', `/v1/sessions/${session.id}`)).json()) as Record<string, unknown>)
        .billed_minutes,
    ).toBe(2);
  });

  const turn = (overrides: Record<string, unknown> = {}) => ({
    type: 'transcript',
    turn_id: 'item_1',
    role: 'user',
    text: 'What is the weather like in Paris?',
    language: 'en',
    interrupted: false,
    started_at: '2026-11-21T10:00:01.000Z',
    ended_at: '2026-11-21T10:00:03.000Z',
    ...overrides,
  });

  test('transcript turns are stored once each, in order, and read back by their own account only', async () => {
    const session = await startSession();
    // The agent's reply is reported first but started later: the transcript orders by start.
    const reply = turn({
      turn_id: 'item_2',
      role: 'agent',
      text: 'Sunny and mild.',
      interrupted: true,
      started_at: '2026-11-21T10:00:04.000Z',
      // Said on the backend's order (docs/api.md#sessions-direct): kept and shown.
      ordered_by: 'api',
    });
    expect((await session.report(reply)).status).toBe(200);
    const deliveries = await Promise.all(Array.from({ length: 3 }, () => session.report(turn())));
    expect(deliveries.map((r) => r.status)).toEqual([200, 200, 200]);
    const read = await account.call('GET', `/v1/sessions/${session.id}/transcript`);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({
      session_id: session.id,
      turns: [
        {
          role: 'user',
          text: 'What is the weather like in Paris?',
          language: 'en',
          interrupted: false,
          ordered_by: null,
          tool_call: null,
          document_ids: null,
          started_at: '2026-11-21T10:00:01.000Z',
          ended_at: '2026-11-21T10:00:03.000Z',
        },
        {
          role: 'agent',
          text: 'Sunny and mild.',
          language: 'en',
          interrupted: true,
          ordered_by: 'api',
          tool_call: null,
          document_ids: null,
          started_at: '2026-11-21T10:00:04.000Z',
          ended_at: '2026-11-21T10:00:03.000Z',
        },
      ],
    });
    const stranger = await service.account();
    expect((await stranger.call('GET', `/v1/sessions/${session.id}/transcript`)).status).toBe(404);
    expect((await account.call('GET', '/v1/sessions/ses_doesnotexist/transcript')).status).toBe(404);
    // The last turns can arrive as the job leaves an ended session: they are kept.
    await account.call('POST', `/v1/sessions/${session.id}/end`);
    expect(
      (await session.report(turn({ turn_id: 'item_3', text: 'Bye!', started_at: '2026-11-21T10:00:09.000Z' }))).status,
    ).toBe(200);
    const after = (await (await account.call('GET', `/v1/sessions/${session.id}/transcript`)).json()) as {
      turns: { text: string }[];
    };
    expect(after.turns.map((t) => t.text)).toEqual(['What is the weather like in Paris?', 'Sunny and mild.', 'Bye!']);
  });

  test('a malformed transcript turn is refused and stores nothing', async () => {
    const session = await startSession();
    for (const bad of [
      turn({ role: 'narrator' }),
      turn({ started_at: 'yesterday' }),
      turn({ turn_id: '' }),
      turn({ text: 5 }),
    ]) {
      expect((await session.report(bad)).status).toBe(422);
    }
    expect((await session.report(turn(), 'not-the-token')).status).toBe(401);
    const read = (await (await account.call('GET', `/v1/sessions/${session.id}/transcript`)).json()) as {
      turns: unknown[];
    };
    expect(read.turns).toEqual([]);
    await account.call('POST', `/v1/sessions/${session.id}/end`);
  });

  test('a session whose agent never arrives ends as agent_unavailable, its hold given back; one whose job reported agent_joined does not', async () => {
    const before = (await service.services.ledger.balance(account.accountId))!;
    const abandoned = await startSession(); // the visitor came, no agent did (every worker full)
    const unattended = await startSession(); // neither came
    const served = await startSession(); // the agent came, the visitor did not
    expect((await served.report({ type: 'agent_joined' })).status).toBe(200);
    await service.services.lifecycle.markJoined(abandoned.id);
    expect(await service.services.ledger.balance(account.accountId)).toBe(before - 30); // three holds
    // Before the deadline (SESSION_AGENT_TIMEOUT_SECONDS, 60 by default) nothing ends.
    await service.services.lifecycle.sweep(new Date(Date.now() + 30_000));
    const statusOf = async (id: string) =>
      (await (await account.call('GET', `/v1/sessions/${id}`)).json()) as Record<string, unknown>;
    for (const session of [abandoned, unattended, served]) expect((await statusOf(session.id)).status).toBe('running');
    // Past it (and past the 60 s join deadline too).
    await service.services.lifecycle.sweep(new Date(Date.now() + 61_000));
    expect(await statusOf(abandoned.id)).toMatchObject({
      status: 'ended',
      end_reason: 'agent_unavailable',
      billed_minutes: 0,
      credits_charged: 0,
    });
    expect(await statusOf(unattended.id)).toMatchObject({
      status: 'ended',
      end_reason: 'agent_unavailable',
      billed_minutes: 0,
    });
    expect(await statusOf(served.id)).toMatchObject({ status: 'ended', end_reason: 'no_join', billed_minutes: 0 });
    expect(await service.services.ledger.balance(account.accountId)).toBe(before);
  });

  test('a job whose tracks LiveKit never received is replaced at once, though no worker has room; one whose worker stops, then, ends the session', async () => {
    const dispatchesOf = async (room: string) =>
      (await service.services.livekit.dispatches.listDispatch(room)).filter((dispatch) => dispatch.agentName).length;
    const statusOf = async (id: string) =>
      (await (await account.call('GET', `/v1/sessions/${id}`)).json()) as Record<string, unknown>;
    const undelivered = await startSession();
    const drained = await startSession();
    for (const session of [undelivered, drained])
      expect((await session.report({ type: 'agent_joined' })).status).toBe(200);
    expect((await undelivered.report({ type: 'agent_leaving', reason: 'frames_lost' })).status).toBe(422);
    expect((await undelivered.report({ type: 'agent_leaving', reason: 'tracks_not_received' })).status).toBe(200);
    // No reason is a worker stopping (jobs of an older agent send none).
    expect((await drained.report({ type: 'agent_leaving' })).status).toBe(200);
    await eventually(async () => (await dispatchesOf(undelivered.id)) === 2, 10_000, 'a second dispatch');
    await eventually(async () => (await statusOf(drained.id)).status === 'ended', 10_000, 'the drained session to end');
    expect(await statusOf(drained.id)).toMatchObject({ end_reason: 'service_restarting' });
    // The replaced session goes on, waiting for its new agent (the agent timeout counts from the loss).
    const [row] = await service.services.database.db.select().from(sessions).where(eq(sessions.id, undelivered.id));
    expect(row).toMatchObject({ status: 'running', agentJoinedAt: null });
    expect(row!.agentWaitSince).not.toBeNull();
    await account.call('POST', `/v1/sessions/${undelivered.id}/end`);
  });

  /** The service's session lifecycle but for its LiveKit rooms, which are `rooms` (a race or a restart staged). */
  const lifecycleWithRooms = (rooms: typeof service.services.livekit.rooms) =>
    new SessionLifecycle({
      db: service.services.database.db,
      billing: service.services.billing,
      livekit: { ...service.services.livekit, rooms },
      joinTimeoutSeconds: 60,
      agentTimeoutSeconds: 60,
    });

  test("an ending's reason holds when the webhooks its room closure sets off arrive before it is recorded", async () => {
    // LiveKit may deliver room_finished (and the visitor's participant_left) while the ending
    // that deleted the room is still on its way to the database: here they are delivered
    // inside deleteRoom, before it returns. They must not turn the cause into room_closed.
    const { services } = service;
    const real = services.livekit;
    for (const webhook of ['room_finished', 'participant_left'] as const) {
      const session = await startSession();
      await services.lifecycle.markJoined(session.id);
      const { visitorIdentity } = (await services.lifecycle.find(session.id))!;
      const rooms = Object.assign(Object.create(real.rooms), {
        deleteRoom: async (name: string) => {
          await real.rooms.deleteRoom(name);
          const event = {
            event: webhook,
            room: { name },
            participant: { identity: visitorIdentity, kind: 0 },
          } as unknown as WebhookEvent;
          await services.lifecycle.onWebhook(event);
        },
      });
      await lifecycleWithRooms(rooms).endForMissingAgent(session.id);
      const read = (await (await account.call('GET', `/v1/sessions/${session.id}`)).json()) as Record<string, unknown>;
      expect({ webhook, ...read }).toMatchObject({ webhook, status: 'ended', end_reason: 'agent_unavailable' });
    }
  });

  test('a visitor_left report ends the session as client_left while its room exists, as room_closed once the room is gone', async () => {
    const { services } = service;
    const real = services.livekit;
    const here = await startSession();
    expect((await here.report({ type: 'visitor_left' })).status).toBe(200);
    expect(await services.lifecycle.find(here.id)).toMatchObject({ status: 'ended', endReason: 'client_left' });
    // A job that lost its connection with a killed LiveKit: the restarted server has no such room.
    const gone = await startSession();
    const rooms = Object.assign(Object.create(real.rooms), { listRooms: async () => [] });
    await lifecycleWithRooms(rooms).visitorLeft(gone.id);
    expect(await services.lifecycle.find(gone.id)).toMatchObject({ status: 'ended', endReason: 'room_closed' });
  });

  test('the sweep ends a session past its maximum duration (the deadline is computed in SQL on every engine)', async () => {
    const session = await startSession();
    await service.services.database.db
      .update(sessions)
      .set({ maxDurationSeconds: 1, joinedAt: new Date() })
      .where(eq(sessions.id, session.id));
    await Bun.sleep(1_100);
    expect(await service.services.lifecycle.sweep()).toBeGreaterThanOrEqual(1);
    const read = (await (await account.call('GET', `/v1/sessions/${session.id}`)).json()) as Record<string, unknown>;
    expect(read).toMatchObject({ status: 'ended', end_reason: 'max_duration' });
  });
});
