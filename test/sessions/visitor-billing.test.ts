// Billing the minutes a visitor saw (issue 30, docs/api.md#credits), on Postgres (docs/testing.md#engines), a real
// LiveKit, two agent workers in processes of their own and an rtc-node visitor. A billed
// "minute" is shortened to 6 s here (BILLING_INTERVAL_SECONDS), so "50 s after the start" is
// 5 s, "15 s" 1.5 s and "61 s" 7.5 s. Minute 0 begins when the visitor first receives the
// avatar; a visitor who leaves and comes back within a minute pays nothing more; a worker
// killed mid-minute costs no minute. The invoice's fields (visitor and streamed seconds) are
// on the session, in /v1/usage and in the session.ended webhook; the ledger sums to the balance.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import type { Static } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { SessionResponse } from '../../src/sessions/contract.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { createAstronaut, joinWatchingVideo, startSession } from '../avatar/support.ts';
import { type AgentProcess, startAgentProcess } from '../support/agent-process.ts';
import { oneEngine, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { eventually, type StartedSession } from '../support/visitor.ts';
import { Microphone } from '../support/voice.ts';
import { LOOPBACK_WEBHOOKS_ENV, subscribedReceiver } from '../support/webhook-subscription.ts';
import type { WebhookReceiver } from '../support/webhooks.ts';

const MINUTE_SECONDS = 6;
const MINUTE_MS = MINUTE_SECONDS * 1000;
const REJOIN_SECONDS = 4;

/** As GET /v1/sessions/{id} answers (its schema's type). */
type SessionBody = Static<typeof SessionResponse>;

describe.each(oneEngine('postgres'))('minutes a visitor saw, on %s', (engine) => {
  const dirs: string[] = [];
  const agents: AgentProcess[] = [];
  let service: TestService;
  let account: TestAccount;
  let identityId = '';
  let receiver: WebhookReceiver;
  let secret = '';

  const read = async (id: string) => (await (await account.call('GET', `/v1/sessions/${id}`)).json()) as SessionBody;
  const ended = (id: string) =>
    eventually(async () => ((await read(id)).status === 'ended' ? read(id) : undefined), 20_000, 'the session ended');

  /** A session whose avatar streams, nobody in the room yet. */
  async function streamingSession(): Promise<StartedSession> {
    const session = await startSession(account, { identity_id: identityId });
    await eventually(async () => (await read(session.room_name)).streaming_started_at, 30_000, 'the avatar streaming');
    return session;
  }

  /**
   * The visitor in the room, its microphone on, until `leave()`; resolves once it receives the
   * avatar's frames. (LiveKit tells the agent of a participant that publishes nothing only at
   * its next 3 s batch of updates: a visitor with a microphone is announced at once.)
   */
  async function visit(session: StartedSession) {
    const { visitor, videos } = await joinWatchingVideo(session);
    const microphone = await Microphone.publish(visitor.room);
    await eventually(() => (videos.at(-1)?.frames.length ?? 0) > 0, 15_000, 'the avatar at the visitor');
    return {
      videos,
      async leave() {
        videos.forEach((v) => v.close());
        await microphone.stop();
        await visitor.leave();
      },
    };
  }

  /** A streaming session the visitor joins 50 s (of the scaled minute) after its start and leaves `staySeconds` later: the session once ended. */
  async function joinedLateFor(staySeconds: number) {
    const session = await streamingSession();
    await Bun.sleep((50 / 60) * MINUTE_MS);
    const visitor = await visit(session);
    await Bun.sleep((staySeconds / 60) * MINUTE_MS);
    await visitor.leave();
    return { session, body: await ended(session.room_name) };
  }

  async function ledgerSumsToBalance() {
    const balance = (await service.services.ledger.balance(account.accountId))!;
    const entries = await service.services.ledger.entries(account.accountId, 1000);
    expect(entries.reduce((sum, e) => sum + e.amount, 0)).toBe(balance);
  }

  beforeAll(async () => {
    service = await startTestService(engine, {
      livekit: 'local',
      env: {
        SESSION_ADMISSION: 'workers',
        BILLING_INTERVAL_SECONDS: String(MINUTE_SECONDS),
        SESSION_REJOIN_SECONDS: String(REJOIN_SECONDS),
        SESSION_SWEEP_INTERVAL_SECONDS: '1',
        CREDITS_ONBOARDING: '0',
        ...LOOPBACK_WEBHOOKS_ENV,
      },
    });
    account = await service.account({ credits: 100_000 });
    const { livekit } = service.services;
    const spawn = () => startAgentProcess({ livekit, internalUrl: service.url, dirs, env: { AGENT_MAX_JOBS: '2' } });
    agents.push(...(await Promise.all([spawn(), spawn()])));
    identityId = (await createAstronaut(account, { language: 'en' })).identity_id;
    ({ receiver, secret } = await subscribedReceiver(account, ['session.ended']));
  }, 120_000);
  afterAll(async () => {
    for (const agent of agents) agent.kill();
    receiver?.stop();
    await service?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('a visitor joining 50 s after the start and staying 15 s pays one minute; the invoice fields say so', async () => {
    const { session, body } = await joinedLateFor(15);
    expect(body).toMatchObject({
      end_reason: 'client_left',
      billed_minutes: 1,
      credits_charged: service.config.credits.perAvatarMinute,
    });
    // In the room with the avatar ~1.5 s; streaming from before the join until the end.
    expect(body.visitor_seconds).toBeGreaterThanOrEqual(1);
    expect(body.visitor_seconds).toBeLessThanOrEqual(4);
    expect(body.streamed_seconds).toBeGreaterThanOrEqual(Math.floor((65 / 60) * MINUTE_SECONDS));
    expect(body.duration_seconds).toBeGreaterThanOrEqual(body.streamed_seconds);
    // The session.ended webhook carries the same figures.
    const delivered = await receiver.waitFor('the session.ended webhook', () =>
      receiver.verified('/hooks', secret).find((event) => event.data.session_id === session.room_name),
    );
    expect(delivered.data).toMatchObject({
      billed_minutes: 1,
      credits_charged: body.credits_charged,
      visitor_seconds: body.visitor_seconds,
      streamed_seconds: body.streamed_seconds,
      duration_seconds: body.duration_seconds,
    });
    await ledgerSumsToBalance();
  }, 90_000);

  test('one staying 61 s pays two', async () => {
    const { body } = await joinedLateFor(75);
    expect(body).toMatchObject({ billed_minutes: 2, credits_charged: 2 * service.config.credits.perAvatarMinute });
    expect(body.visitor_seconds).toBeGreaterThanOrEqual(MINUTE_SECONDS);
    await ledgerSumsToBalance();
  }, 90_000);

  test('a visitor who leaves and comes back within the minute pays nothing more; the session waits for them', async () => {
    const session = await streamingSession();
    const first = await visit(session);
    await Bun.sleep((15 / 60) * MINUTE_MS);
    await first.leave();
    await Bun.sleep(1_000);
    // Still running: the visitor may come back (SESSION_REJOIN_SECONDS), with the same token.
    expect((await read(session.room_name)).status).toBe('running');
    const again = await visit(session);
    await Bun.sleep((10 / 60) * MINUTE_MS);
    await again.leave();
    const body = await ended(session.room_name);
    expect(body).toMatchObject({ end_reason: 'client_left', billed_minutes: 1 });
    // About 1.5 s + 1 s in the room (with the time to see the avatar each time); not the 1 s away.
    expect(body.visitor_seconds).toBeGreaterThanOrEqual(2);
    expect(body.visitor_seconds).toBeLessThanOrEqual(5);
    await ledgerSumsToBalance();
  }, 90_000);

  test('a visitor away longer than SESSION_REJOIN_SECONDS ends the session client_left, billed up to then', async () => {
    const session = await streamingSession();
    const visitor = await visit(session);
    // The job bills minute 0 once it sees the visitor; a visitor gone before that (its join
    // announced late on a loaded machine, run 83) is never billed, which is not this test's point.
    await eventually(async () => (await read(session.room_name)).billed_minutes >= 1, 10_000, 'minute 0 billed');
    await visitor.leave();
    const left = Date.now();
    const body = await ended(session.room_name);
    expect(body).toMatchObject({ end_reason: 'client_left', billed_minutes: 1 });
    // Ended by the sweep (every second here) once the wait was over.
    expect(Date.now() - left).toBeGreaterThanOrEqual(REJOIN_SECONDS * 1000);
    expect(Date.now() - left).toBeLessThan(REJOIN_SECONDS * 1000 + 4_000);
  }, 60_000);

  test('a worker killed in the middle of a minute adds none; the time without an avatar is not billed', async () => {
    const row = async (id: string) =>
      (await service.services.database.db.select().from(sessions).where(eq(sessions.id, id)))[0]!;
    const session = await streamingSession();
    const visitor = await visit(session);
    await eventually(
      async () => (await row(session.room_name)).billedMinutes === 1,
      5_000,
      'minute 0 charged at the join',
    );
    await Bun.sleep(1_000);
    const workerId = await eventually(async () => (await row(session.room_name)).agentWorkerId, 5_000, 'its worker');
    const victim = agents.find((a) => a.workerId === workerId)!;
    victim.kill();
    agents.splice(agents.indexOf(victim), 1);
    const killedAt = performance.now();
    // The other worker's avatar reaches the visitor: a second video track.
    await eventually(() => (visitor.videos[1]?.frames.length ?? 0) > 0, 30_000, 'the avatar back');
    const gap = performance.now() - killedAt;
    // A gap the billing would notice if it counted it (more than the margin below).
    expect(gap).toBeGreaterThan(2_000);
    // With the avatar for the rest of what was paid, less a 2 s margin (the job sees each avatar
    // a network's delay before the visitor, and the visitor's leaving after): still minute 0's
    // money. What the visitor saw of the first avatar is measured, not assumed: the waits above
    // take seconds longer on a busy machine (a second minute was charged when it was assumed 1 s).
    const seen = () =>
      killedAt - visitor.videos[0]!.frames[0]!.at + (performance.now() - visitor.videos[1]!.frames[0]!.at);
    await Bun.sleep(Math.max(0, MINUTE_MS - 2_000 - seen()));
    await visitor.leave();
    const body = await ended(session.room_name);
    expect({ gapMs: Math.round(gap), billed: body.billed_minutes }).toEqual({ gapMs: Math.round(gap), billed: 1 });
    // The visitor's time counts both avatars, not the gap between them.
    expect(body.visitor_seconds).toBeLessThanOrEqual(Math.ceil((MINUTE_MS - 500) / 1000));
    await ledgerSumsToBalance();
    agents.push(
      await startAgentProcess({
        livekit: service.services.livekit,
        internalUrl: service.url,
        dirs,
        env: { AGENT_MAX_JOBS: '2' },
      }),
    );
  }, 120_000);

  test('GET /v1/usage sums the visitor and streamed seconds of the sessions above', async () => {
    const list = (await (await account.call('GET', '/v1/sessions?limit=100')).json()) as { session_id: string }[];
    const bodies = await Promise.all(list.map((s) => read(s.session_id)));
    const usage = (await (await account.call('GET', '/v1/usage?granularity=day')).json()) as {
      totals: { visitor_seconds: number; streamed_seconds: number; avatar_minutes: number };
    };
    const sum = (field: 'visitor_seconds' | 'streamed_seconds') => bodies.reduce((total, b) => total + b[field], 0);
    expect(usage.totals.visitor_seconds).toBe(sum('visitor_seconds'));
    expect(usage.totals.streamed_seconds).toBe(sum('streamed_seconds'));
    expect(usage.totals.avatar_minutes).toBe(bodies.reduce((total, b) => total + b.billed_minutes, 0));
  });
});
