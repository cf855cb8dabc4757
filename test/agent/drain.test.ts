// An agent worker stopped with SIGTERM drains (docs/api.md#session-lifecycle): it takes no new
// sessions and its readiness answers 503, its running sessions go on for AGENT_DRAIN_SECONDS,
// then each moves to another worker, or, with none free, ends with a `service_restarting`
// notice. Its health and readiness answer on AGENT_HEALTH_PORT.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { eq } from 'drizzle-orm';
import { freeTcpPort } from '../../src/livekit/local-ports.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { agentWorkers } from '../../src/workers/schema.ts';
import { createAstronaut, joinWatchingVideo } from '../avatar/support.ts';
import { type AgentProcess, startAgentProcess } from '../support/agent-process.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { postSessionStart } from '../support/session-start.ts';
import { eventually, type StartedSession, sessionEnded } from '../support/visitor.ts';

const DRAIN_SECONDS = 3;

describe('an agent worker stopped with SIGTERM', () => {
  const dirs: string[] = [];
  const agents: AgentProcess[] = [];
  let service: TestService;
  let account: TestAccount;
  let identityId = '';

  const spawn = async () => {
    const healthPort = await freeTcpPort('127.0.0.1');
    const agent = await startAgentProcess({
      livekit: service.services.livekit,
      internalUrl: service.url,
      dirs,
      env: { AGENT_MAX_JOBS: '1', AGENT_DRAIN_SECONDS: String(DRAIN_SECONDS), AGENT_HEALTH_PORT: String(healthPort) },
    });
    agents.push(agent);
    // Its health server starts right after the worker registers: not answering yet is not ready.
    const readyz = () =>
      fetch(`http://127.0.0.1:${healthPort}/readyz`)
        .then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { status: string; checks?: Record<string, string> },
        }))
        .catch(() => ({
          status: 0,
          body: { status: 'unreachable' } as { status: string; checks?: Record<string, string> },
        }));
    return { agent, readyz };
  };
  const row = async (id: string) =>
    (await service.services.database.db.select().from(sessions).where(eq(sessions.id, id)))[0]!;

  /**
   * What the control plane, LiveKit and the workers saw of a session that did not go as planned,
   * in one line for the error (CI shows only the run's tail, where the failures are recapped);
   * the workers' whole output goes to the log.
   */
  async function explain(sessionId: string): Promise<string> {
    const { agentJoinedAt, agentSeenAt, dispatchedAt, agentWorkerId, status } = await row(sessionId);
    const db = service.services.database.db;
    const livekit = service.services.livekit;
    const workers = (await db.select().from(agentWorkers)).map(
      (w) =>
        `${w.id}${w.draining ? ' draining' : ''}  ${w.runningJobs}/${w.capacity} jobs, seen ${w.seenAt.toISOString()}, expires ${w.expiresAt.toISOString()}`,
    );
    const dispatches = await livekit.dispatches
      .listDispatch(sessionId)
      .then((all) => all.map((d) => `${d.id} (${d.state?.jobs.length ?? 0} jobs)`))
      .catch((e: Error) => [e.message]);
    const inRoom = await livekit.rooms
      .listParticipants(sessionId)
      .then((all) => all.map((p) => `${p.identity} (${p.tracks.length} tracks)`))
      .catch((e: Error) => [e.message]);
    for (const agent of agents) console.log(`worker ${agent.workerId} printed:\n${agent.output().slice(-30_000)}`);
    // Each worker's last warnings and errors (pino levels 40 and up).
    const warnings = agents.map(
      (agent) =>
        `${agent.workerId}: ${agent
          .output()
          .split('\n')
          .filter((line) => /"level":(4|5|6)0/.test(line))
          .slice(-3)
          .map((line) => /"msg":"([^"]*)"/.exec(line)?.[1] ?? line.slice(0, 120))
          .join(' | ')}`,
    );
    return [
      `now ${new Date().toISOString()}; the session: ${JSON.stringify({ status, agentJoinedAt, agentSeenAt, dispatchedAt, agentWorkerId })}`,
      `the workers: ${workers.join('; ')}`,
      `its dispatches: ${dispatches.join('; ')}`,
      `in its room: ${inRoom.join('; ')}`,
      `the workers' last warnings: ${warnings.join(' / ')}`,
    ].join('\n');
  }

  /** A session on an identity, a visitor receiving its avatar; its video tracks, in order. */
  async function visit() {
    // The worker may still be finishing an earlier session: a 503 says when to come back.
    const session = await eventually(
      async () => {
        const response = await postSessionStart(account, { identity_id: identityId });
        return response.status === 200 ? ((await response.json()) as StartedSession) : undefined;
      },
      20_000,
      'a session admitted',
    ).catch(async (error: Error) => {
      for (const agent of agents) console.log(`worker ${agent.workerId} printed:\n${agent.output().slice(-30_000)}`);
      const workers = await service.services.database.db.select().from(agentWorkers);
      throw new Error(`${error.message}\nnow ${new Date().toISOString()}; the workers: ${JSON.stringify(workers)}`);
    });
    const { visitor, videos } = await joinWatchingVideo(session);
    await eventually(() => (videos[0]?.frames.length ?? 0) >= 25, 30_000, 'the avatar streaming');
    const workerId = await eventually(
      async () => (await row(session.room_name)).agentWorkerId,
      10_000,
      'the worker running it',
    );
    return { session, visitor, videos, workerId, close: () => videos.forEach((v) => v.close()) };
  }

  beforeAll(async () => {
    service = await startTestService('pglite', { livekit: 'local', env: { SESSION_ADMISSION: 'workers' } });
    account = await service.account({ credits: 100_000 });
    identityId = (await createAstronaut(account, { language: 'en' })).identity_id;
  }, 60_000);
  afterAll(async () => {
    for (const agent of agents) agent.kill();
    await service?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('with another worker free, the session moves to it after the drain; the visitor stays', async () => {
    const [first, second] = await Promise.all([spawn(), spawn()]);
    // Ready once registered and warm.
    for (const worker of [first, second])
      await eventually(async () => (await worker.readyz()).status === 200, 60_000, 'a ready worker');
    const { session, visitor, videos, workerId, close } = await visit();
    try {
      const [draining, other] = workerId === first!.agent.workerId ? [first!, second!] : [second!, first!];
      draining.agent.child.kill('SIGTERM');
      const stoppedAt = performance.now();
      // Draining: not ready, and the session goes on with its avatar.
      await eventually(
        async () => (await draining.readyz()).body.checks?.draining === 'stopping',
        5_000,
        'readiness saying draining',
      );
      expect((await draining.readyz()).status).toBe(503);
      // The draining worker's avatar keeps coming (frames arrive late on a loaded machine, so
      // count them as they come rather than after a fixed half of the drain), and no other yet.
      const before = videos[0]!.frames.length;
      await eventually(
        () => videos[0]!.frames.length > before + 10,
        DRAIN_SECONDS * 1000,
        'the avatar streaming on while its worker drains',
      );
      expect(videos.length).toBe(1);
      // Then it moves: the other worker's avatar comes into the same room.
      await eventually(() => (videos[1]?.frames.length ?? 0) > 0, 20_000, 'the avatar from the other worker').catch(
        async (error: Error) => {
          throw new Error(`${error.message}\n${await explain(session.room_name)}`);
        },
      );
      expect(performance.now() - stoppedAt).toBeGreaterThanOrEqual(DRAIN_SECONDS * 1000);
      // The row follows the workers' heartbeats (every 0.5 s), which may come after the first frame.
      await eventually(
        async () => (await row(session.room_name)).agentWorkerId === other.agent.workerId,
        3_000,
        "the other worker listed as the session's worker",
      );
      expect(visitor.room.isConnected).toBe(true);
      expect((await row(session.room_name)).status).toBe('running');
      expect(await draining.agent.child.exited).toBe(0);
      agents.splice(agents.indexOf(draining.agent), 1);
    } finally {
      close();
      await visitor.leave();
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
    }
  }, 120_000);

  test('with no other worker, the session ends after the drain with the service_restarting notice', async () => {
    const [last] = agents;
    const { session, visitor, close } = await visit();
    try {
      last!.child.kill('SIGTERM');
      const reason = await Promise.race([visitor.disconnected, Bun.sleep(30_000).then(() => 'still connected')]);
      expect(reason).not.toBe('still connected');
      expect(visitor.notices).toContainEqual({
        topic: 'likeness.notice',
        payload: { type: 'service_restarting', session_id: session.room_name },
      });
      const ended = await sessionEnded(account, session.room_name);
      expect(ended).toMatchObject({ status: 'ended', end_reason: 'service_restarting' });
      expect(await last!.child.exited).toBe(0);
      agents.length = 0;
    } finally {
      close();
      await visitor.leave().catch(() => undefined);
    }
  }, 90_000);
});
