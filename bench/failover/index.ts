// bench/failover: how long a visitor faces a room without an avatar when the agent worker
// running their session dies. Two `--role agent` processes report to an in-process control
// plane; each round starts a session, waits for its avatar to stream, SIGKILLs the worker
// running it (its job processes with it), and measures the kill → the first avatar frame from
// the other worker at the visitor (target p50 ≤ 4 s: the 3 s heartbeat TTL and ~0.5–1 s to come back). The killed worker is replaced before
// the next round. Providers are the wire fakes; the LiveKit binary is the one `npm test` built:
//   LIKENESS_LIVEKIT_BIN=$(ls ~/.cache/likeness/livekit-server-*/livekit-server) \
//     bun bench/failover/index.ts [--kills 5]

import { rm } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { TrackKind } from '@livekit/rtc-node';
import { eq } from 'drizzle-orm';
import { sessions } from '../../src/sessions/schema.ts';
import { FrameLog } from '../../test/avatar/support.ts';
import { type AgentProcess, startAgentProcess } from '../../test/support/agent-process.ts';
import { startProviderFakes } from '../../test/support/fakes/index.ts';
import { eventually, joinAsVisitor } from '../../test/support/visitor.ts';
import { createBenchAccount, report, startBenchService } from '../support/index.ts';

const { values } = parseArgs({ options: { kills: { type: 'string', default: '5' } } });

const fakes = await startProviderFakes();
Object.assign(process.env, fakes.env);
const bench = await startBenchService({ env: { CREDITS_ONBOARDING: '0', SESSION_ADMISSION: 'workers' } });
const { service } = bench;
const dirs: string[] = [];
const agents: AgentProcess[] = [];
try {
  const { livekit } = service.services;
  const spawnAgent = async () =>
    agents.push(await startAgentProcess({ livekit, internalUrl: service.url, dirs, env: { AGENT_MAX_JOBS: '2' } }));
  await Promise.all([spawnAgent(), spawnAgent()]);
  console.log(`cpus=${navigator.hardwareConcurrency} bun=${Bun.version} kills=${values.kills}`);
  const { post, createIdentity } = await createBenchAccount(service);
  const identityId = await createIdentity();
  const row = async (id: string) =>
    (await service.services.database.db.select().from(sessions).where(eq(sessions.id, id)))[0]!;

  const gaps: number[] = [];
  for (let round = 0; round < Number(values.kills); round++) {
    const started = await post('/v1/sessions/start', { identity_id: identityId });
    if (started.status !== 200) throw new Error(`start answered ${started.status}: ${await started.text()}`);
    const session = (await started.json()) as { room_name: string; token: string; rtc_url: string };
    const videos: FrameLog[] = [];
    const visitor = await joinAsVisitor(session, {
      onTrack: (track) => void (track.kind === TrackKind.KIND_VIDEO && videos.push(new FrameLog(track))),
    });
    await eventually(() => (videos[0]?.frames.length ?? 0) >= 25, 30_000, 'the avatar streaming');
    const workerId = await eventually(
      async () => (await row(session.room_name)).agentWorkerId,
      10_000,
      'the worker running the session',
    );
    const victim = agents.find((a) => a.workerId === workerId)!;
    victim.kill();
    const killedAt = performance.now();
    await eventually(() => (videos[1]?.frames.length ?? 0) > 0, 30_000, 'the avatar back');
    gaps.push(videos[1]!.frames[0]!.at - killedAt);
    console.log(
      `round ${round + 1}: SIGKILL → first avatar frame again ${Math.round(gaps.at(-1)!)} ms (visitor connected: ${visitor.room.isConnected})`,
    );
    for (const video of videos) video.close();
    await visitor.leave();
    await post(`/v1/sessions/${session.room_name}/end`);
    agents.splice(agents.indexOf(victim), 1);
    await spawnAgent();
  }
  report('failover: SIGKILL of the worker → first avatar frame again', gaps);
} finally {
  for (const agent of agents) agent.kill();
  await bench.stop();
  await fakes.stop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
}
process.exit(0);
