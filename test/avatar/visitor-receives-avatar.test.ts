// The avatar end to end: the real LiveKit server, the agent worker with the built-in
// talking head, the voice agent on the providers' wire fakes, and a visitor (a real rtc-node
// client) measuring what arrives: exactly the avatar's audio and video, at the size its form
// factor asks for, at 25 fps; no raw voice track; billing from the first frame; and a mouth
// that moves with the speech and closes when the visitor interrupts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type RemoteParticipant, TrackKind } from '@livekit/rtc-node';
import type { FaceRig } from '../../src/contract/face-rig.ts';
import { AGENT_STATE_ATTRIBUTE } from '../../src/contract/index.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import type { TestAccount, TestService } from '../support/service.ts';
import { eventually, joinAsVisitor, type Visitor } from '../support/visitor.ts';
import { startVisitorService } from '../support/visitor-service.ts';
import { Listener, Microphone, speech } from '../support/voice.ts';
import {
  type Box,
  createAstronaut,
  FrameLog,
  mouthBox,
  mouthChange,
  type ReceivedFrame,
  startPortraitOnly,
  startSession,
  storedTraining,
} from './support.ts';

const fakes = sharedProviderFakes();
const QUESTION = 'What is the weather like in Paris today?';
const LONG_REPLY = 'Paris has many museums, and the Louvre is the largest of them all. '.repeat(8).trim();
/**
 * Frames per second the visitor must receive, over FPS_WINDOW_MS, of the 25 the job renders.
 * Not 24: on a 2-core box running the whole suite, the job's loop stalls ~300 ms now and then
 * (agents' watchdog logs it) and a window lost 11 frames once (239). The ≥ 24 fps target is
 * bench/renderer's, measured on a quiet machine; this test catches a stream that does not keep
 * its rate.
 */
const MIN_FPS = 23;
const FPS_WINDOW_MS = 10_000;
const WINDOW_DELAY_MS = 1_000;
/** Client-side loudness above which the avatar is speaking (as test/support/voice.ts counts sound). */
const LOUD = 300;

let service: TestService;
let account: TestAccount;
/** A second control plane on the same LiveKit and worker, with landscape video switched off. */
let portraitOnly: TestService;
let portraitOnlyAccount: TestAccount;

beforeAll(async () => {
  ({ service, account } = await startVisitorService());
  ({ service: portraitOnly, account: portraitOnlyAccount } = await startPortraitOnly(service, fakes.env));
  fakes.openai.respond((request) => (request.userTexts.at(-1) === QUESTION ? LONG_REPLY : 'All right.'));
});
afterAll(async () => {
  await portraitOnly?.stop();
  await service?.stop();
});

interface Watched {
  visitor: Visitor;
  agent: RemoteParticipant;
  video: FrameLog;
  ears: Listener;
  microphone: Microphone;
  roomName: string;
  startedAt: number;
  end(): Promise<void>;
}

/** Starts a session on `on`, joins it as the visitor and watches the avatar's tracks. */
async function watch(
  on: { service: TestService; account: TestAccount },
  body: Record<string, unknown>,
  mouth?: { box: Box; width: number; height: number },
): Promise<Watched> {
  const startedAt = Date.now();
  const session = await startSession(on.account, body);
  const visitor = await joinAsVisitor(session);
  const microphone = await Microphone.publish(visitor.room);
  const agent = await eventually(() => visitor.agent(), 20_000, 'the agent');
  const videoTrack = await eventually(
    () => visitor.tracks.find((t) => t.kind === TrackKind.KIND_VIDEO),
    20_000,
    'the avatar video',
  );
  const audioTrack = await eventually(
    () => visitor.tracks.find((t) => t.kind === TrackKind.KIND_AUDIO),
    20_000,
    'the avatar audio',
  );
  const video = new FrameLog(videoTrack, mouth);
  const ears = new Listener(audioTrack);
  return {
    visitor,
    agent,
    video,
    ears,
    microphone,
    roomName: session.room_name,
    startedAt,
    async end() {
      video.close();
      ears.close();
      await microphone.stop();
      await on.account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    },
  };
}

/**
 * The frames of a 10 s window that opens a second after the first frame: the job publishes
 * while its conversation is still starting (and greeting), and the rate the visitor watches
 * is the steady one, not that first second's.
 */
async function fpsWindow(video: FrameLog): Promise<ReceivedFrame[]> {
  const first = await eventually(() => video.frames[0], 20_000, 'the first frame');
  const from = first.at + WINDOW_DELAY_MS;
  await eventually(
    () => video.frames.at(-1)!.at >= from + FPS_WINDOW_MS,
    WINDOW_DELAY_MS + FPS_WINDOW_MS + 10_000,
    `${FPS_WINDOW_MS} ms of frames`,
  );
  return video.between(from, from + FPS_WINDOW_MS);
}

function expectAvatarTracks(watched: Watched): void {
  // Exactly one audio and one video track, both the avatar's: no raw agent voice track.
  const published = [...watched.agent.trackPublications.values()]
    .map((p) => `${p.kind === TrackKind.KIND_AUDIO ? 'audio' : 'video'}:${p.name}`)
    .sort();
  expect(published).toEqual(['audio:avatar_audio', 'video:avatar']);
  // In H.264 (AVATAR_VIDEO_CODEC's default): half VP8's encoding CPU, and what the visitor decoded.
  const video = [...watched.agent.trackPublications.values()].find((p) => p.kind === TrackKind.KIND_VIDEO);
  expect(video?.mimeType?.toLowerCase()).toBe('video/h264');
  expect(watched.visitor.tracks.map((t) => (t.kind === TrackKind.KIND_AUDIO ? 'audio' : 'video')).sort()).toEqual([
    'audio',
    'video',
  ]);
}

async function rigOf(identityId: string, shape: 'portrait' | 'landscape'): Promise<FaceRig> {
  const { assets } = await storedTraining(service, identityId);
  return (await (await fetch(service.services.assetLinks.url(assets![`${shape}.rig`]!))).json()) as FaceRig;
}

/** Whether the avatar was silent at the visitor from `ms` before `at` to `ms` after it. */
function silentAround(ears: Listener, at: number, ms: number): boolean {
  const around = ears.levels.filter((level) => level.at >= at - ms && level.at <= at + ms);
  return around.length >= ms / 10 && around.every((level) => level.rms < LOUD / 3);
}
function loudAround(ears: Listener, at: number, ms: number): boolean {
  return ears.levels.some((level) => level.at >= at - ms && level.at <= at + ms && level.rms > LOUD);
}

/**
 * The delay (ms, positive: the voice after the mouth) at which the mouth's opening, frame by
 * frame, best follows the voice's loudness at the visitor: Pearson's r of the two over lags of
 * ±300 ms in 10 ms steps, the loudness averaged over 40 ms around each frame's arrival + lag.
 */
function voiceAfterMouth(frames: { at: number; open: number }[], ears: Listener): { lag: number; r: number } {
  const loudness = (at: number) => {
    const around = ears.levels.filter((level) => level.at >= at - 20 && level.at <= at + 20);
    return around.length === 0 ? 0 : around.reduce((sum, level) => sum + level.rms, 0) / around.length;
  };
  const pearson = (xs: number[], ys: number[]) => {
    const mean = (vs: number[]) => vs.reduce((a, b) => a + b, 0) / vs.length;
    const mx = mean(xs);
    const my = mean(ys);
    let sxy = 0;
    let sxx = 0;
    let syy = 0;
    for (let i = 0; i < xs.length; i++) {
      sxy += (xs[i]! - mx) * (ys[i]! - my);
      sxx += (xs[i]! - mx) ** 2;
      syy += (ys[i]! - my) ** 2;
    }
    return sxy / Math.sqrt(sxx * syy || 1);
  };
  let best = { lag: 0, r: -Infinity };
  const opens = frames.map((f) => f.open);
  for (let lag = -300; lag <= 300; lag += 10) {
    const r = pearson(
      opens,
      frames.map((f) => loudness(f.at + lag)),
    );
    if (r > best.r) best = { lag, r };
  }
  return best;
}

/** Audio packets the visitor's WebRTC received so far (its inbound-rtp stats). */
async function audioPacketsReceived(visitor: Visitor): Promise<number> {
  const stats = await visitor.room.getRtcStats();
  let packets = 0;
  // LiveKit 1.13 may carry both directions on one peer connection, reported as the publisher's.
  for (const entry of [...stats.subscriberStats, ...stats.publisherStats]) {
    if (entry.stats.case === 'inboundRtp' && entry.stats.value.stream?.kind === 'audio')
      packets += Number(entry.stats.value.received?.packetsReceived ?? 0);
  }
  return packets;
}

describe('the avatar as the visitor receives it', () => {
  test(`phone: exactly the avatar audio and video, 540×960 at ≥ ${MIN_FPS} fps, billed from the first frame; the mouth moves with the speech, the voice with it and quiet between replies`, async () => {
    const identity = await createAstronaut(account, { prompt: 'You are Ada. Marker: e2e-phone.' });
    const rig = await rigOf(identity.identity_id, 'portrait');
    const box = mouthBox(rig);
    const watched = await watch(
      { service, account },
      { identity_id: identity.identity_id, form_factor: 'phone' },
      { box, width: 540, height: 960 },
    );
    try {
      const frames = await fpsWindow(watched.video);
      expectAvatarTracks(watched);
      expect(new Set(frames.map((f) => `${f.width}x${f.height}`))).toEqual(new Set(['540x960']));
      console.log(`phone: ${frames.length} frames in ${FPS_WINDOW_MS} ms at the visitor`);

      // Billing started with the avatar's first frame: after the start call, before the visitor saw it.
      const details = (await (await account.call('GET', `/v1/sessions/${watched.roomName}`)).json()) as {
        streaming_started_at: string | null;
      };
      const firstFrameEpoch = performance.timeOrigin + watched.video.frames[0]!.at;
      expect(details.streaming_started_at).not.toBeNull();
      const streamingAt = Date.parse(details.streaming_started_at!);
      expect(streamingAt).toBeGreaterThanOrEqual(watched.startedAt - 5);
      expect(streamingAt).toBeLessThanOrEqual(firstFrameEpoch + 5);

      // The greeting moves the mouth; silence leaves it as it was.
      await eventually(
        () => watched.ears.silenceAfter(watched.ears.soundAfter(0, LOUD) ?? Infinity, 600),
        30_000,
        'the greeting to end',
      );
      const measured = watched.video.frames.filter((f) => f.mouth);
      const silent = measured.filter((f) => silentAround(watched.ears, f.at, 300));
      const speaking = measured.filter((f) => loudAround(watched.ears, f.at, 60));
      expect(silent.length).toBeGreaterThan(10);
      expect(speaking.length).toBeGreaterThan(10);
      const reference = silent[0]!.mouth!;
      const change = (fs: ReceivedFrame[]) =>
        fs.map((f) => mouthChange(f.mouth!, reference, box)).sort((a, b) => a - b);
      const idle = change(silent);
      const moving = change(speaking);
      const p = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
      console.log(
        `mouth change: silent p50 ${p(idle, 0.5).toFixed(2)} p95 ${p(idle, 0.95).toFixed(2)}; speaking p50 ${p(moving, 0.5).toFixed(2)} p90 ${p(moving, 0.9).toFixed(2)}`,
      );
      expect(p(moving, 0.5)).toBeGreaterThan(2 * p(idle, 0.95));
      expect(frames.length).toBeGreaterThanOrEqual((MIN_FPS * FPS_WINDOW_MS) / 1000);

      // Between replies the voice sends nothing (no silence for Opus to encode), half a second after its words.
      await Bun.sleep(1_000);
      const before = await audioPacketsReceived(watched.visitor);
      await Bun.sleep(2_000);
      expect((await audioPacketsReceived(watched.visitor)) - before).toBe(0);

      // The voice and the mouth arrive together: over the greeting, the opening best follows the
      // loudness at a delay a viewer accepts (ITU-R BT.1359: sound up to 90 ms early or 185 ms late;
      // noticed from 45 early or 125 late). Quiet, 20–60 ms late; on a machine running the whole
      // suite once 50 ms early (run 124): the video's path slows more than the voice's under load.
      const greeting = measured.filter((f) => f.at > (watched.ears.soundAfter(0, LOUD) ?? 0) - 500);
      const sync = voiceAfterMouth(
        greeting.map((f) => ({ at: f.at, open: mouthChange(f.mouth!, reference, box) })),
        watched.ears,
      );
      console.log(`the voice after the mouth at the visitor: ${sync.lag} ms (r ${sync.r.toFixed(2)})`);
      expect(sync.r).toBeGreaterThan(0.5);
      expect(sync.lag).toBeGreaterThanOrEqual(-90);
      expect(sync.lag).toBeLessThanOrEqual(185);
    } finally {
      await watched.end();
    }
  }, 90_000);

  test(`desktop: landscape 960×540 at ≥ ${MIN_FPS} fps`, async () => {
    const identity = await createAstronaut(account, { prompt: 'You are Ada. Marker: e2e-desktop.' });
    const watched = await watch({ service, account }, { identity_id: identity.identity_id, form_factor: 'desktop' });
    try {
      const frames = await fpsWindow(watched.video);
      expectAvatarTracks(watched);
      expect(new Set(frames.map((f) => `${f.width}x${f.height}`))).toEqual(new Set(['960x540']));
      console.log(`desktop: ${frames.length} frames in ${FPS_WINDOW_MS} ms at the visitor`);
      expect(frames.length).toBeGreaterThanOrEqual((MIN_FPS * FPS_WINDOW_MS) / 1000);
    } finally {
      await watched.end();
    }
  }, 90_000);

  test(`desktop where landscape video is disabled (AVATAR_LANDSCAPE=false): portrait 540×960 at ≥ ${MIN_FPS} fps`, async () => {
    const identity = await createAstronaut(portraitOnlyAccount, { prompt: 'You are Ada. Marker: e2e-portrait-only.' });
    const watched = await watch(
      { service: portraitOnly, account: portraitOnlyAccount },
      { identity_id: identity.identity_id, form_factor: 'desktop' },
    );
    try {
      const frames = await fpsWindow(watched.video);
      expectAvatarTracks(watched);
      expect(new Set(frames.map((f) => `${f.width}x${f.height}`))).toEqual(new Set(['540x960']));
      console.log(`desktop, landscape disabled: ${frames.length} frames in ${FPS_WINDOW_MS} ms at the visitor`);
      expect(frames.length).toBeGreaterThanOrEqual((MIN_FPS * FPS_WINDOW_MS) / 1000);
    } finally {
      await watched.end();
    }
  }, 90_000);

  test('an interruption closes the mouth within a frame or two of the agent yielding', async () => {
    const identity = await createAstronaut(account, { prompt: 'You are Ada. Marker: e2e-interrupt.' });
    const box = mouthBox(await rigOf(identity.identity_id, 'portrait'));
    const watched = await watch(
      { service, account },
      { identity_id: identity.identity_id, form_factor: 'phone' },
      { box, width: 540, height: 960 },
    );
    try {
      const { ears, microphone, video } = watched;
      const greeting = await eventually(() => ears.soundAfter(0, LOUD), 30_000, 'the greeting');
      await eventually(() => ears.silenceAfter(greeting, 600), 30_000, 'the greeting to end');
      await Bun.sleep(1_500); // silent frames: the closed mouth's level
      fakes.deepgram.script({ transcript: QUESTION, language: 'en' }, { transcript: 'Stop, please.', language: 'en' });
      const asked = await microphone.say(await speech(QUESTION));
      const replyStarted = await eventually(() => ears.soundAfter(asked.endedAt, LOUD), 20_000, 'the long reply');
      await Bun.sleep(2_000);
      // Still talking, as the agent's state says: beside a CPU hog its audio paused 400 ms once
      // in these 2 s (run 113), which is no end of the reply.
      expect(watched.agent.attributes[AGENT_STATE_ATTRIBUTE]).toBe('speaking');
      const interruption = await microphone.say(await speech('Stop, please. Stop.'));
      const turn = await eventually(
        async () => {
          const body = (await (await account.call('GET', `/v1/sessions/${watched.roomName}/transcript`)).json()) as {
            turns: { role: string; interrupted: boolean; ended_at: string }[];
          };
          return body.turns.find((t) => t.role === 'agent' && t.interrupted);
        },
        10_000,
        'the interrupted turn',
      );
      // The job stamps the turn as it yields (clears the avatar's speech).
      const yieldedAt = Date.parse(turn.ended_at) - performance.timeOrigin;
      expect(yieldedAt).toBeGreaterThan(interruption.startedAt);
      await eventually(() => video.frames.at(-1)!.at > yieldedAt + 1_000, 10_000, 'a second of frames after the yield');

      const measured = video.frames.filter((f) => f.mouth);
      const reference = measured.find((f) => f.at < asked.startedAt && silentAround(ears, f.at, 300));
      expect(reference).toBeDefined();
      const change = (f: ReceivedFrame) => mouthChange(f.mouth!, reference!.mouth!, box);
      const sorted = (fs: ReceivedFrame[]) => fs.map(change).sort((a, b) => a - b);
      const at = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
      // Closed: the level of the silent frames before the question (idle head motion only).
      const idle = sorted(measured.filter((f) => f.at < asked.startedAt && silentAround(ears, f.at, 300)));
      // Open: the reply while it played, before the visitor started the interruption.
      const speaking = sorted(
        measured.filter((f) => f.at > replyStarted && f.at < interruption.startedAt && loudAround(ears, f.at, 60)),
      );
      expect(idle.length).toBeGreaterThan(10);
      expect(speaking.length).toBeGreaterThan(20);
      const closedLevel = at(idle, 0.95);
      expect(at(speaking, 0.5)).toBeGreaterThan(2 * closedLevel);
      const threshold = (closedLevel + at(speaking, 0.5)) / 2;

      // After the yield: only frames already on their way (rendered before it, ~2 at 40 ms
      // each over loopback, one or two more on a loaded machine: CI once saw #4) and the one
      // being drawn may show an open mouth; every later frame, while the visitor still talks, is
      // closed. A renderer deaf to the interruption moves its mouth through the reply's buffered
      // audio: most of the second's frames.
      const after = video.between(yieldedAt, yieldedAt + 1_000).filter((f) => f.mouth);
      const lastOpen = after.findLastIndex((f) => change(f) >= threshold);
      console.log(
        `interruption: closed level ${closedLevel.toFixed(1)}, speaking p50 ${at(speaking, 0.5).toFixed(1)}; ` +
          (lastOpen >= 0
            ? `last open frame: #${lastOpen} after the yield, ${Math.round(after[lastOpen]!.at - yieldedAt)} ms`
            : 'no open frame after the yield') +
          ` (${after.length} frames in the second after it)`,
      );
      expect(after.length).toBeGreaterThan(15);
      expect(lastOpen).toBeLessThanOrEqual(5);
    } finally {
      await watched.end();
    }
  }, 120_000);
});
