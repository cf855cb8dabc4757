// bench/sessions: p50/p95 of POST /v1/sessions/start (HTTP call to 200) on the local LiveKit
// server, of a visitor's join → first remote track (the avatar video), with the agent worker
// in the process, and of bursts: as many visitors as the worker has slots, starting in the
// same second, each from its start call to its first avatar frame (target p95 ≤ 1.5 s).
// The LiveKit binary is the one `npm start` or `npm test` built:
//   LIKENESS_LIVEKIT_BIN=$(ls ~/.cache/likeness/livekit-server-*/livekit-server) \
//     bun bench/sessions/index.ts [--starts 100] [--joins 15] [--bursts 5] [--providers offline|fakes]
// (`offline`, the default: no key, the offline models, as `npm start` with no key; `fakes`: the
// cloud providers' wire fakes, whose job processes load no models.)
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { type RemoteTrack, Room, RoomEvent, TrackKind } from '@livekit/rtc-node';
import { freeAgentSlots } from '../../src/workers/admission.ts';
import { FrameLog } from '../../test/avatar/support.ts';
import { startProviderFakes } from '../../test/support/fakes/index.ts';
import { eventually, joinAsVisitor } from '../../test/support/visitor.ts';
import { busyShare, createBenchAccount, machineBusy, report, settled, startBenchService } from '../support/index.ts';

const { values } = parseArgs({
  options: {
    starts: { type: 'string', default: '100' },
    joins: { type: 'string', default: '15' },
    bursts: { type: 'string', default: '5' },
    providers: { type: 'string', default: 'offline' },
  },
});
if (values.providers === 'fakes') Object.assign(process.env, (await startProviderFakes()).env);

// Bursts back to back start more sessions a minute than an account may by default (0: no limit).
const bench = await startBenchService({
  agent: true,
  env: { CREDITS_ONBOARDING: '0', LIMIT_SESSION_STARTS_PER_MINUTE: '0' },
});
const { service } = bench;
try {
  console.log(`engine=${service.services.database.engine} cpus=${navigator.hardwareConcurrency} bun=${Bun.version}`);
  const { post, createIdentity } = await createBenchAccount(service);
  const identity = { identity_id: await createIdentity() };
  const start = async (body: unknown) => {
    const t0 = performance.now();
    const response = await post('/v1/sessions/start', body);
    const session = (await response.json()) as { room_name: string; token: string; rtc_url: string };
    if (response.status !== 200) throw new Error(`start answered ${response.status}`);
    return { ms: performance.now() - t0, session };
  };
  const end = (id: string) => post(`/v1/sessions/${id}/end`);

  const joins: number[] = [];
  for (let i = 0; i < Number(values.joins); i++) {
    const { session } = await start({ identity_id: identity.identity_id });
    const room = new Room();
    const t0 = performance.now();
    const firstTrack = new Promise<void>((resolve) => room.once(RoomEvent.TrackSubscribed, () => resolve()));
    await room.connect(session.rtc_url, session.token, { autoSubscribe: true, dynacast: false });
    await firstTrack;
    joins.push(performance.now() - t0);
    await room.disconnect();
    await end(session.room_name);
  }
  report('visitor join → first remote track', joins);

  // Start → end without a visitor, measured last: the jobs of sessions ended at once queue up
  // behind each other on 2 cores and would delay the joins above.
  const starts: number[] = [];
  for (let i = 0; i < Number(values.starts) + 3; i++) {
    const { ms, session } = await start({ identity_id: identity.identity_id });
    if (i >= 3) starts.push(ms);
    await end(session.room_name);
  }
  report('POST /v1/sessions/start (avatar)', starts);

  // Bursts: every slot taken in the same second, once the worker is idle and warm again.
  const worker = bench.worker!;
  const visit = async () => {
    const t0 = performance.now();
    const { session } = await start({ identity_id: identity.identity_id });
    const started = performance.now();
    let video: FrameLog | undefined;
    let subscribed = 0;
    const onTrack = (track: RemoteTrack) => {
      if (track.kind !== TrackKind.KIND_VIDEO) return;
      subscribed = performance.now();
      video = new FrameLog(track);
    };
    const visitor = await joinAsVisitor(session, { onTrack });
    await eventually(() => (video?.frames.length ?? 0) > 0, 30_000, 'the first avatar frame');
    const firstFrame = video!.frames[0]!.at;
    return {
      ms: firstFrame - t0,
      // Where the time went: the start call, the wait for the avatar's track, its first keyframe.
      phases: [started - t0, subscribed - started, firstFrame - subscribed],
      leave: async () => {
        video?.close();
        await visitor.leave();
        await end(session.room_name);
      },
    };
  };
  const burst: number[] = [];
  for (let round = 0; round < Number(values.bursts); round++) {
    await eventually(() => worker.warmProcesses() >= worker.capacity, 120_000, 'warm job processes');
    await eventually(
      async () =>
        (await freeAgentSlots(service.services.database.db, bench.config.livekit.agentName, 60)).free >=
        worker.capacity,
      60_000,
      'free slots',
    );
    // LiveKit hears a worker's load every 2.5 s: a burst right after the last one ended
    // would find the worker still full there, and its dispatches are sent again 2 s later.
    await Bun.sleep(3_000);
    // Idle: processes forked to replace the last burst's take jobs while their models still
    // load (agent/job.ts), so "warm" alone no longer means the machine has settled.
    await settled();
    // How busy the machine and this process (the API, the worker and the visitors) were during
    // the burst: on 2 cores the burst's tail is CPU-bound (docs/benchmarks.md).
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    stalls.enable();
    const busyBefore = machineBusy();
    const visits = await Promise.all(Array.from({ length: worker.capacity }, visit));
    stalls.disable();
    const busy = busyShare(busyBefore, machineBusy());
    burst.push(...visits.map((v) => v.ms));
    const phases = visits.map((v) => v.phases.map(Math.round).join('+')).join(', ');
    console.log(
      `  burst ${round + 1}: ${visits.map((v) => Math.round(v.ms)).join(', ')} ms (start + track + first frame: ${phases}); CPU ${Math.round(busy * 100)} % busy, this process's longest stall ${Math.round(stalls.max / 1e6)} ms`,
    );
    await Promise.all(visits.map((v) => v.leave()));
  }
  report(`burst of ${worker.capacity}: start call → first avatar frame`, burst);
} finally {
  await bench.stop();
}
process.exit(0);
