// bench/renderer: what the built-in talking head costs and how many avatar sessions this
// machine holds at 25 fps.
//   1. ms per frame, rendering only and rendering + the hand-off to a VideoSource
//      (captureFrame), per shape, over real speech, in this process;
//   2. a visitor's join → first avatar frame, session by session (p50/p95);
//   3. a ramp of concurrent sessions (1, 2, … --max-sessions; ramp.ts), each a real session
//      with the voice agent (wire fakes for the cloud providers) and a visitor, in a process of
//      their own (visitors.ts), that receives the video and asks a question every --turn-every
//      seconds: frames per second each visitor decoded over --window seconds, and the CPU of
//      each kind of process (process CPU time / wall time), the jobs' by thread per session.
//      --stages: first one session's job by thread while it listens and while it speaks.
// The visitors decode every stream on the same 2 cores: a real client is elsewhere, so the
// capacity found is a floor. The LiveKit binary is the one `npm test` built:
//   LIKENESS_LIVEKIT_BIN=$(ls ~/.cache/likeness/livekit-server-*/livekit-server) \
//     bun bench/renderer/index.ts [--frames 500] [--joins 10] [--max-sessions 8] [--window 10]
//       [--turn-every 20] [--stages] [--ramp-only] [--record] [--visitors-send-silence]
// --visitors-send-silence: the visitors' microphones send encoded silence between questions, as
// the test microphone does (by default they send only their speech, as a browser with DTX).
// --record: every session of the ramp is recorded (docs/api.md#recordings): each job also runs an
// ffmpeg encoder, whose CPU is its own column.

import { readFileSync } from 'node:fs';
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
import { speech } from '../../test/support/voice.ts';
import { type BenchAccount, createBenchAccount, report, startBenchService } from '../support/index.ts';
import { runRamp } from './ramp.ts';

const { values } = parseArgs({
  options: {
    frames: { type: 'string', default: '500' },
    joins: { type: 'string', default: '10' },
    'max-sessions': { type: 'string', default: '8' },
    window: { type: 'string', default: '10' },
    record: { type: 'boolean', default: false },
    'turn-every': { type: 'string', default: '20' },
    'visitors-send-silence': { type: 'boolean', default: false },
    stages: { type: 'boolean', default: false },
    'ramp-only': { type: 'boolean', default: false },
  },
});
const FRAMES = Number(values.frames);
const JOINS = Number(values.joins);
const MAX_SESSIONS = Number(values['max-sessions']);
const WINDOW_MS = Number(values.window) * 1000;
const RECORD = values.record === true;
/** Seconds between each visitor's questions in the ramp (0: the avatars only listen). */
const TURN_EVERY_MS = Number(values['turn-every']) * 1000;
const STAGES = values.stages === true;
const RAMP_ONLY = values['ramp-only'] === true;
const MIN_FPS = 24;
/** The second join case: long after the job's first frame (about 1 s after the start call). */
const LIVE_AFTER_MS = 3_000;
/** Before measuring a new level: the session's job starts, greets, and the encoder settles. */
const SETTLE_MS = 4_000;
const SAMPLES_PER_FRAME = 48_000 / AVATAR_FPS;

const fakes = await startProviderFakes();
// Long replies keep the lips busy (about 11 s each at the voice fake's pace, so a visitor asking
// every 20 s hears the avatar speak about half the time); agent jobs are forked from this
// process and inherit these.
fakes.openai.respond(
  () =>
    'Hello, I am Ada, your guide to Paris. The Louvre, the Orsay and the Rodin museum are all worth a visit, and the walk along the Seine between them is lovely in the evening. If you have a whole day, start early at the Louvre, have lunch in the Tuileries garden, and end the afternoon at the Orsay, where the light in the great hall is at its best.',
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
  if (!RAMP_ONLY)
    for (const shape of ['portrait', 'landscape'] as AvatarShape[]) await perFrame(jobIdentity, shape, voice);

  // 2. Join → first frame, one session at a time: a visitor joining the moment the start call
  // answers (the job is still starting), and one joining once the avatar streams, as a
  // browser does after its backend handed it the token.
  for (const delayMs of RAMP_ONLY ? [] : [0, LIVE_AFTER_MS]) {
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
  const capacity = await runRamp({
    maxSessions: MAX_SESSIONS,
    windowMs: WINDOW_MS,
    settleMs: SETTLE_MS,
    minFps: MIN_FPS,
    turnEveryMs: TURN_EVERY_MS,
    visitorsSendSilence: values['visitors-send-silence'],
    stages: STAGES,
    record: RECORD,
    startSession: () => startSession(account, identity.identity_id, 'phone'),
    endSession: (session) => account.post(`/v1/sessions/${session.room_name}/end`).then(() => undefined),
  });
  console.log(
    `concurrent avatar sessions${RECORD ? ', each recorded,' : ''} holding ≥ ${MIN_FPS} fps at every visitor: ${capacity} (target 8)`,
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
