// Admission (docs/api.md#sessions-start): agent workers report their capacity and running
// sessions in heartbeats, and POST /v1/sessions/start answers 503 with Retry-After while no
// live worker has a free slot, before any room, hold or row exists. Two real workers here,
// each taking one session (AGENT_MAX_JOBS=1), on a real LiveKit server.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { AccessToken } from 'livekit-server-sdk';
import { type AgentWorker, startAgentWorker } from '../../agent/worker.ts';
import { HEARTBEAT_PATH, HEARTBEAT_TTL_SECONDS } from '../../src/contract/index.ts';
import { sessions as sessionRows } from '../../src/sessions/schema.ts';
import { ADMISSION_GRACE_SECONDS } from '../../src/workers/admission.ts';
import { agentWorkers } from '../../src/workers/schema.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { postSessionStart } from '../support/session-start.ts';
import { eventually } from '../support/visitor.ts';

describe.each(ENGINES)('admission against the workers’ heartbeats on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  const workers: AgentWorker[] = [];

  const startWorker = () =>
    startAgentWorker({
      wsURL: service.services.livekit.url,
      apiKey: service.services.livekit.apiKey,
      apiSecret: service.services.livekit.apiSecret,
      agentName: service.config.livekit.agentName,
      maxConcurrentJobs: 1,
      controlPlaneUrl: service.url,
    });
  const start = () => postSessionStart(account, { language: 'en' });
  const rooms = async () => (await service.services.livekit.rooms.listRooms()).map((room) => room.name).sort();
  const sessionCount = async () => ((await (await account.call('GET', '/v1/sessions')).json()) as unknown[]).length;

  beforeAll(async () => {
    service = await startTestService(engine, { livekit: 'local', env: { SESSION_ADMISSION: 'workers' } });
    account = await service.account({ credits: 10_000 });
  }, 60_000);
  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await service?.stop();
  });

  test('no worker has reported: 503 "No agent worker is running", Retry-After, nothing created', async () => {
    const response = await start();
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toEqual({ detail: 'No agent worker is running; retry shortly' });
    expect(await rooms()).toEqual([]);
    expect(await sessionCount()).toBe(0);
  });

  test('a heartbeat not signed for its worker is refused and counts for nothing', async () => {
    const heartbeat = {
      worker_id: 'w-forged',
      agent_name: service.config.livekit.agentName,
      capacity: 50,
      sessions: [],
      draining: false,
    };
    const post = (token?: string) =>
      fetch(`${service.url}${HEARTBEAT_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(heartbeat),
      });
    expect((await post()).status).toBe(401);
    expect(
      (
        await post(
          await new AccessToken('someone', 'else-else-else-else-else-else-else-else', { identity: 'w-forged' }).toJwt(),
        )
      ).status,
    ).toBe(401);
    // Signed, but for another worker.
    const { apiKey, apiSecret } = service.services.livekit;
    expect((await post(await new AccessToken(apiKey, apiSecret, { identity: 'w-other' }).toJwt())).status).toBe(401);
    expect((await start()).status).toBe(503);
  });

  test('two workers of one slot each: two sessions start, the third is 503 with no room, hold or row; one ends and a start succeeds again', async () => {
    workers.push(await startWorker(), await startWorker());
    const balance = async () => (await service.services.ledger.balance(account.accountId))!;
    const first = await start();
    const second = await start();
    expect([first.status, second.status]).toEqual([200, 200]);
    const sessions = (await Promise.all([first.json(), second.json()])) as { room_name: string }[];
    const before = { rooms: await rooms(), sessions: await sessionCount(), balance: await balance() };
    expect(before.rooms).toEqual(sessions.map((s) => s.room_name).sort());

    const third = await start();
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('5');
    expect(await third.json()).toEqual({ detail: 'Every agent is busy; retry shortly' });
    expect({ rooms: await rooms(), sessions: await sessionCount(), balance: await balance() }).toEqual(before);

    // Each worker takes its session (LiveKit spreads them), and reports it running.
    await eventually(
      async () =>
        (
          await service.services.database.db.select({ agentJoinedAt: sessionRows.agentJoinedAt }).from(sessionRows)
        ).every((row) => row.agentJoinedAt),
      30_000,
      'both agents in their rooms',
    );
    expect((await start()).status).toBe(503);

    await account.call('POST', `/v1/sessions/${sessions[0]!.room_name}/end`);
    // The freed slot shows once its worker's next heartbeat says so (every 0.5 s).
    const again = await eventually(
      async () => {
        const response = await start();
        return response.status === 200 ? ((await response.json()) as { room_name: string }) : undefined;
      },
      15_000,
      'a start admitted again',
    );
    expect(again.room_name).toMatch(/^ses_/);
    // LiveKit heard of the freed slot before the control plane did (agent/worker.ts,
    // announceFreedSlots): the first dispatch was taken, not lost and sent again 2 s later.
    const row = await eventually(
      async () => {
        const [found] = await service.services.database.db
          .select()
          .from(sessionRows)
          .where(eq(sessionRows.id, again.room_name));
        return found?.agentJoinedAt ? found : undefined;
      },
      15_000,
      'the agent of the admitted session',
    );
    expect(row.dispatchedAt!.getTime() - row.createdAt.getTime()).toBeLessThan(1_000);
    for (const session of [sessions[1]!, again]) await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  }, 90_000);

  test('a stopping worker stops counting at once: with none left, 503 again', async () => {
    for (const worker of workers.splice(0)) await worker.stop();
    const response = await start();
    expect(response.status).toBe(503);
  }, 60_000);

  test('a worker whose beats come late (a stalled host) still counts for twice their lifetime; silent longer, it does not', async () => {
    const { db } = service.services.database;
    // Its last beat 5 s ago: 2 s past the heartbeat's 3 s lifetime, within the grace.
    await db.insert(agentWorkers).values({
      id: 'w-late',
      agentName: service.config.livekit.agentName,
      capacity: 1,
      runningJobs: 0,
      draining: false,
      seenAt: sql`now() - make_interval(secs => 5)`,
      expiresAt: sql`now() - make_interval(secs => ${5 - HEARTBEAT_TTL_SECONDS})`,
    });
    try {
      const admitted = await start();
      expect(admitted.status).toBe(200);
      await account.call('POST', `/v1/sessions/${((await admitted.json()) as { room_name: string }).room_name}/end`);
      // Silent for the lifetime and the grace and a second more: gone.
      await db
        .update(agentWorkers)
        .set({ expiresAt: sql`now() - make_interval(secs => ${ADMISSION_GRACE_SECONDS + 1})` })
        .where(eq(agentWorkers.id, 'w-late'));
      const refused = await start();
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({ detail: 'No agent worker is running; retry shortly' });
    } finally {
      await db.delete(agentWorkers).where(eq(agentWorkers.id, 'w-late'));
    }
  }, 30_000);
});
