// bench/renderer: what the built-in talking head costs and how many avatar sessions this
// machine holds at 25 fps.
//   1. ms per frame, rendering only and rendering + the hand-off to a VideoSource
//      (captureFrame), per shape, over real speech, in this process;
//   2. a visitor's join → first avatar frame, session by session (p50/p95);
//   3. a ramp of concurrent sessions (1, 2, … --max-sessions), each a real session with the
//      voice agent (wire fakes for the cloud providers) and a visitor that publishes a silent
//      microphone and receives the video: frames per second each visitor decoded over
//      --window seconds, and the CPU the job processes used (process CPU time / wall time).
// The visitors decode every stream in this process, on the same 2 cores, beside the control
// plane and the worker: a real client is elsewhere, so the capacity found is a floor. The LiveKit binary is the one `npm test` built:
//   LIKENESS_LIVEKIT_BIN=$(ls ~/.cache/likeness/livekit-server-*/livekit-server) \
//     bun bench/renderer/index.ts [--frames 500] [--joins 10] [--max-sessions 8] [--window 10] [--record]
// --record: every session of the ramp is recorded (docs/api.md#recordings): each job also runs an
// ffmpeg encoder, whose CPU is its own column.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initializeLogger } from '@livekit/agents';
import { TrackKind, VideoSource } from '@livekit/rtc-node';
import { eq } from 'drizzle-orm';
import { TalkingHeadRenderer } from '../../agent/pipelines/builtin/index.ts';
import { AVATAR_FPS, type AvatarShape, avatarFrameSize, type DispatchIdentity } from '../../src/contract/index.ts';
import { identities } from '../../src/identities/schema.ts';
import { dispatchAssets } from '../../src/sessions/dispatch.ts';
import { FrameLog } from '../../test/avatar/support.ts';
import { startProviderFakes } from '../../test/support/fakes/index.ts';
import { file } from '../../test/support/forms.ts';
import { eventually, joinAsVisitor, type StartedSession, type Visitor } from '../../test/support/visitor.ts';
import { Microphone, speech } from '../../test/support/voice.ts';
import { type BenchAccount, createBenchAccount, report, startBenchService } from '../support/index.ts';

const { values } = parseArgs({
  options: {
    frames: { type: 'string', default: '500' },
    joins: { type: 'string', default: '10' },
    'max-sessions': { type: 'string', default: '8' },
    window: { type: 'string', default: '10' },
    record: { type: 'boolean', default: false },
  },
});
const FRAMES = Number(values.frames);
const JOINS = Number(values.joins);
const MAX_SESSIONS = Number(values['max-sessions']);
const WINDOW_MS = Number(values.window) * 1000;
const RECORD = values.record === true;
const MIN_FPS = 24;
/** The second join case: long after the job's first frame (about 1 s after the start call). */
const LIVE_AFTER_MS = 3_000;
/** Before measuring a new level: the session's job starts, greets, and the encoder settles. */
const SETTLE_MS = 4_000;
const SAMPLES_PER_FRAME = 48_000 / AVATAR_FPS;
/** Linux's clock ticks per second for /proc/<pid>/stat times (USER_HZ). */
const TICKS_PER_SECOND = 100;

const fakes = await startProviderFakes();
// Long replies keep the lips busy; agent jobs are forked from this process and inherit these.
fakes.openai.respond(
  () =>
    'Hello, I am Ada, your guide to Paris. The Louvre, the Orsay and the Rodin museum are all worth a visit, and the walk along the Seine between them is lovely in the evening.',
);
Object.assign(process.env, fakes.env);
// The worker takes every session of the ramp (its default capacity is what this bench decides).
process.env.AGENT_MAX_JOBS = String(MAX_SESSIONS + 2);
initializeLogger({ pretty: false, level: 'error' });

const bench = await startBenchService({ agent: true, env: { CREDITS_ONBOARDING: '0' } });
const { service } = bench;
try {
  console.log(
    `cpus=${navigator.hardwareConcurrency} bun=${Bun.version} frames=${FRAMES} joins=${JOINS} max-sessions=${MAX_SESSIONS} window=${WINDOW_MS / 1000}s`,
  );
  const account = await createBenchAccount(service);
  const astronaut = file(
    readFileSync(join(import.meta.dir, '../../test/fixtures/astronaut.png')),
    'astronaut.png',
    'image/png',
  );
  const identity = { identity_id: await account.createIdentity({ image: astronaut }) };

  // 1. Per frame, in this process.
  const [row] = await service.services.database.db
    .select({ training: identities.training })
    .from(identities)
    .where(eq(identities.id, identity.identity_id));
  const jobIdentity: DispatchIdentity = {
    identity_id: identity.identity_id,
    name: 'Ada',
    prompt: '',
    language: 'en',
    pipeline_id: 'builtin',
    image_url: bench.service.services.assetLinks.url('unused'),
    audio_url: null,
    assets: dispatchAssets(row?.training, bench.service.services.assetLinks),
  };
  const voice = await speech(
    'Hello, I am Ada, your guide to Paris. Shall we start with the Louvre, or would you rather walk along the Seine first?',
  );
  for (const shape of ['portrait', 'landscape'] as AvatarShape[]) await perFrame(jobIdentity, shape, voice);

  // 2. Join → first frame, one session at a time: a visitor joining the moment the start call
  // answers (the job is still starting), and one joining once the avatar streams, as a
  // browser does after its backend handed it the token.
  for (const delayMs of [0, LIVE_AFTER_MS]) {
    const joins: number[] = [];
    const connects: number[] = [];
    const subscribes: number[] = [];
    const starts: number[] = [];
    for (let i = 0; i < JOINS; i++) {
      const starting = performance.now();
      const session = await startSession(account, identity.identity_id, 'phone');
      if (delayMs) await Bun.sleep(delayMs);
      const joining = performance.now();
      let frames: FrameLog | undefined;
      let subscribedAt = 0;
      const visitor = await joinAsVisitor(session, {
        onTrack: (track) => {
          if (track.kind !== TrackKind.KIND_VIDEO || frames) return;
          subscribedAt = performance.now();
          frames = new FrameLog(track);
        },
      });
      connects.push(performance.now() - joining);
      const first = await eventually(() => frames?.frames[0], 30_000, 'the first frame');
      joins.push(first.at - joining);
      subscribes.push(subscribedAt - joining);
      starts.push(first.at - starting);
      frames?.close();
      await endSession(account, session, visitor);
      // The worker forks a fresh idle process per session taken: let it get ready.
      await Bun.sleep(3_000);
    }
    if (joins.length) {
      console.log(
        delayMs
          ? `visitor joins ${delayMs} ms after the start call (the avatar streams):`
          : 'visitor joins as the start call answers:',
      );
      report('  visitor join → first avatar frame', joins, { width: 44, digits: 0 });
      report('    join → connected', connects, { width: 44, digits: 0 });
      report('    join → video track subscribed', subscribes, { width: 44, digits: 0 });
      report('  session start call → first avatar frame', starts, { width: 44, digits: 0 });
    }
  }

  // 3. The ramp.
  const running: { session: StartedSession; visitor: Visitor; microphone: Microphone }[] = [];
  let capacity = 0;
  console.log(
    `sessions  fps at the visitors (min / mean)  job CPU per session  all jobs  inference  LiveKit  this process${RECORD ? '  recorders (ffmpeg)' : ''}`,
  );
  try {
    for (let n = 1; n <= MAX_SESSIONS; n++) {
      const session = await startSession(account, identity.identity_id, 'phone');
      const visitor = await joinAsVisitor(session);
      const microphone = await Microphone.publish(visitor.room);
      await eventually(() => visitor.tracks.find((t) => t.kind === TrackKind.KIND_VIDEO), 30_000, 'the avatar video');
      running.push({ session, visitor, microphone });
      await Bun.sleep(SETTLE_MS);
      const decodedBefore = await Promise.all(running.map((r) => framesDecoded(r.visitor)));
      const before = cpuSnapshot();
      const threadsBefore = n === 1 ? threadTicks(jobPids()) : undefined;
      const selfThreadsBefore = n === 1 ? threadTicks([process.pid]) : undefined;
      const from = performance.now();
      await Bun.sleep(WINDOW_MS);
      const to = performance.now();
      const after = cpuSnapshot();
      const threadsAfter = threadsBefore && threadTicks(jobPids());
      const selfThreadsAfter = selfThreadsBefore && threadTicks([process.pid]);
      const decodedAfter = await Promise.all(running.map((r) => framesDecoded(r.visitor)));
      const fps = running.map((_, i) => ((decodedAfter[i]! - decodedBefore[i]!) * 1000) / (to - from));
      const wallSeconds = (to - from) / 1000;
      const jobsCpu = cpuSeconds(before.jobs, after.jobs) / wallSeconds;
      const livekitCpu = cpuSeconds(before.livekit, after.livekit) / wallSeconds;
      const inferenceCpu = cpuSeconds(before.inference, after.inference) / wallSeconds;
      const selfCpu = (after.self - before.self) / wallSeconds;
      const recordersCpu = cpuSeconds(before.recorders, after.recorders) / wallSeconds;
      const minFps = Math.min(...fps);
      const meanFps = fps.reduce((a, b) => a + b, 0) / fps.length;
      console.log(
        `${String(n).padEnd(10)}${`${minFps.toFixed(1)} / ${meanFps.toFixed(1)}`.padEnd(34)}${`${((jobsCpu / n) * 100).toFixed(0)} %`.padEnd(21)}${`${(jobsCpu * 100).toFixed(0)} %`.padEnd(10)}${`${(inferenceCpu * 100).toFixed(0)} %`.padEnd(11)}${`${(livekitCpu * 100).toFixed(0)} %`.padEnd(9)}${`${(selfCpu * 100).toFixed(0)} %`.padEnd(14)}${RECORD ? `${(recordersCpu * 100).toFixed(0)} %` : ''}`,
      );
      if (threadsBefore && threadsAfter)
        console.log(`          one session's job by thread: ${byThread(threadsBefore, threadsAfter, wallSeconds)}`);
      if (selfThreadsBefore && selfThreadsAfter)
        console.log(
          `          this process (service, worker, one visitor) by thread: ${byThread(selfThreadsBefore, selfThreadsAfter, wallSeconds)}`,
        );
      if (minFps >= MIN_FPS) capacity = n;
      else if (n > capacity + 1) break; // two levels below the mark: the machine is full
    }
  } finally {
    for (const r of running) {
      await r.microphone.stop();
      await endSession(account, r.session, r.visitor);
    }
  }
  console.log(
    `concurrent avatar sessions${RECORD ? ', each recorded,' : ''} holding ≥ ${MIN_FPS} fps at every visitor: ${capacity} (target ≥ 6)`,
  );
} finally {
  await bench.stop();
  await fakes.stop();
}
process.exit(0);

async function perFrame(identity: DispatchIdentity, shape: AvatarShape, voice: Int16Array): Promise<void> {
  const size = avatarFrameSize(shape);
  const renderer = new TalkingHeadRenderer({ identity, size, logger: { warn: (message) => console.warn(message) } });
  await renderer.prepare();
  const source = new VideoSource(size.width, size.height);
  const slice = (i: number) => {
    // Speech, then as much silence: the lips move, then rest.
    const start = (i * SAMPLES_PER_FRAME) % (voice.length * 2);
    const audio = new Int16Array(SAMPLES_PER_FRAME);
    if (start + SAMPLES_PER_FRAME <= voice.length) audio.set(voice.subarray(start, start + SAMPLES_PER_FRAME));
    return { audio, speechSamples: start + SAMPLES_PER_FRAME <= voice.length ? SAMPLES_PER_FRAME : 0 };
  };
  // Warm-up (the JIT, the caches): steady-state figures only.
  for (let i = 0; i < 50; i++)
    source.captureFrame(renderer.nextFrame({ ...slice(i), elapsedMs: (i * 1000) / AVATAR_FPS }));
  const renderOnly: number[] = [];
  const withHandOff: number[] = [];
  for (let i = 0; i < FRAMES; i++) {
    const input = { ...slice(i), elapsedMs: (i * 1000) / AVATAR_FPS };
    const t0 = performance.now();
    const frame = renderer.nextFrame(input);
    const t1 = performance.now();
    source.captureFrame(frame, BigInt(Math.round(input.elapsedMs * 1000)));
    const t2 = performance.now();
    renderOnly.push(t1 - t0);
    withHandOff.push(t2 - t0);
  }
  await source.close();
  report(`${shape} ${size.width}×${size.height} render only`, renderOnly, { width: 44, digits: 2 });
  report(`${shape} ${size.width}×${size.height} render + captureFrame`, withHandOff, { width: 44, digits: 2 });
}

/**
 * Video frames the visitor's WebRTC stack decoded so far (its inbound-rtp stats). The ramp
 * counts these rather than reading every frame into JavaScript: a browser decodes too, but
 * copying each picture out through the FFI would charge this box for work no client does here.
 */
async function framesDecoded(visitor: Visitor): Promise<number> {
  const stats = await visitor.room.getRtcStats();
  let decoded = 0;
  // LiveKit 1.13 may carry both directions on one peer connection, reported as the publisher's.
  for (const entry of [...stats.subscriberStats, ...stats.publisherStats]) {
    if (entry.stats.case === 'inboundRtp' && entry.stats.value.stream?.kind === 'video')
      decoded += entry.stats.value.inbound?.framesDecoded ?? 0;
  }
  return decoded;
}

async function startSession(
  account: BenchAccount,
  identityId: string,
  formFactor: 'phone' | 'desktop',
): Promise<StartedSession> {
  const response = await account.post('/v1/sessions/start', {
    identity_id: identityId,
    form_factor: formFactor,
    visual_awareness: false,
    record: RECORD,
  });
  if (response.status !== 200) throw new Error(`session start answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as StartedSession;
}

async function endSession(account: BenchAccount, session: StartedSession, visitor: Visitor): Promise<void> {
  await account.post(`/v1/sessions/${session.room_name}/end`);
  await visitor.leave().catch(() => undefined);
}

interface CpuSnapshot {
  /** utime + stime ticks per job process. */
  jobs: Map<number, number>;
  livekit: Map<number, number>;
  /** The agents' shared inference process (the end-of-turn model). */
  inference: Map<number, number>;
  /** The recordings' encoders (ffmpeg, children of the job processes). */
  recorders: Map<number, number>;
  /** This process's CPU seconds. */
  self: number;
}

/** CPU ticks so far of this process's children: the agent's job processes and the LiveKit server. */
function cpuSnapshot(): CpuSnapshot {
  const jobs = new Map<number, number>();
  const livekit = new Map<number, number>();
  const inference = new Map<number, number>();
  const recorders = new Map<number, number>();
  const children = Bun.spawnSync(['pgrep', '-a', '-P', String(process.pid)])
    .stdout.toString()
    .split('\n')
    .filter(Boolean);
  for (const line of children) {
    const pid = Number(line.split(' ')[0]);
    const ticks = processTicks(pid);
    if (ticks === undefined) continue;
    if (line.includes('job_proc_lazy_main')) {
      jobs.set(pid, ticks);
      for (const child of Bun.spawnSync(['pgrep', '-P', String(pid), 'ffmpeg'])
        .stdout.toString()
        .split('\n')) {
        const recorderTicks = child ? processTicks(Number(child)) : undefined;
        if (recorderTicks !== undefined) recorders.set(Number(child), recorderTicks);
      }
    } else if (line.includes('livekit-server')) livekit.set(pid, ticks);
    else if (line.includes('inference')) inference.set(pid, ticks);
  }
  const usage = process.cpuUsage();
  return { jobs, livekit, inference, recorders, self: (usage.user + usage.system) / 1e6 };
}

function jobPids(): number[] {
  const children = Bun.spawnSync(['pgrep', '-a', '-P', String(process.pid)])
    .stdout.toString()
    .split('\n');
  return children.filter((l) => l.includes('job_proc_lazy_main')).map((l) => Number(l.split(' ')[0]));
}

/** The processes' threads: `pid:tid|name` → CPU ticks so far (thread names without their trailing numbers). */
function threadTicks(pids: number[]): Map<string, number> {
  const threads = new Map<string, number>();
  for (const pid of pids) {
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[\s\d#]+$/, '');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        threads.set(`${pid}:${tid}|${name}`, Number(fields[11]) + Number(fields[12]));
      } catch {}
    }
  }
  return threads;
}

/** The eight busiest thread names between two samples, as shares of one core (libwebrtc names its threads). */
function byThread(before: Map<string, number>, after: Map<string, number>, wallSeconds: number): string {
  const byName = new Map<string, number>();
  for (const [key, ticks] of after) {
    const name = key.slice(key.indexOf('|') + 1);
    byName.set(name, (byName.get(name) ?? 0) + ticks - (before.get(key) ?? 0));
  }
  const top = [...byName].sort((a, b) => b[1] - a[1]).slice(0, 8);
  return top
    .map(([name, ticks]) => `${name} ${((ticks / TICKS_PER_SECOND / wallSeconds) * 100).toFixed(1)} %`)
    .join(', ');
}

function processTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** CPU seconds used between two snapshots by the processes alive at the end (new ones from zero). */
function cpuSeconds(before: Map<number, number>, after: Map<number, number>): number {
  let ticks = 0;
  for (const [pid, now] of after) ticks += now - (before.get(pid) ?? 0);
  return ticks / TICKS_PER_SECOND;
}
