// What a recorded visit's file must show (issue 43's proof), checked the same way on each engine:
// ffprobe reads one H.264 stream at the session's size and one AAC stream, as long as the visit;
// the visitor's voice and the agent's are both in it (energy where each spoke); the mouth moves
// with the agent's audio (the lag that best lines up the agent's loudness with the mouth's
// motion is within 100 ms).
import { expect } from 'bun:test';
import { AVATAR_FPS } from '../../src/contract/index.ts';
import type { TestAccount } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';
import { probeFile } from './support.ts';

/** The recording's audio, decoded for the checks: 16 kHz mono, read in 40 ms steps (one video frame). */
const CHECK_RATE = 16_000;
const STEP_SAMPLES = CHECK_RATE / AVATAR_FPS;

export interface Recording {
  status: string;
  reason: string | null;
  duration_seconds: number | null;
  size_bytes: number | null;
  download_url: string | null;
}

/** A stretch of the visit in this process's performance.now() time. */
export interface Span {
  from: number;
  to: number;
}

export interface RecordedVisit {
  /** The fetched file. */
  path: string;
  /** The session's `streaming_started_at` and `ended_at`, epoch ms. */
  streamedAt: number;
  endedAt: number;
  /** What the API says of it. */
  recording: Recording;
  size: { width: number; height: number };
  greeting: Span;
  question: Span;
  reply: Span;
}

/** The session's recording once it is `ready` or `failed`. */
export async function settledRecording(account: TestAccount, sessionId: string): Promise<Recording> {
  return eventually(
    async () => {
      const body = (await (await account.call('GET', `/v1/sessions/${sessionId}/recording`)).json()) as Recording;
      return body.status === 'ready' || body.status === 'failed' ? body : undefined;
    },
    90_000,
    'the recording, ready',
  );
}

/**
 * After a recorded session's end: the session says it is recorded, its recording becomes
 * `ready`, and its link serves an MP4 of the size it says, written to `path`.
 */
export async function fetchReadyRecording(
  account: TestAccount,
  sessionId: string,
  path: string,
): Promise<{ recording: Recording; streamedAt: number; endedAt: number }> {
  const read = (await (await account.call('GET', `/v1/sessions/${sessionId}`)).json()) as {
    record: boolean;
    streaming_started_at: string;
    ended_at: string;
  };
  expect(read.record).toBe(true);
  const recording = await settledRecording(account, sessionId);
  expect(recording.reason).toBeNull();
  expect(recording.status).toBe('ready');
  const file = await fetch(recording.download_url!);
  expect(file.status).toBe(200);
  expect(file.headers.get('content-type')).toBe('video/mp4');
  const bytes = new Uint8Array(await file.arrayBuffer());
  expect(bytes.length).toBe(recording.size_bytes!);
  await Bun.write(path, bytes);
  return { recording, streamedAt: Date.parse(read.streaming_started_at), endedAt: Date.parse(read.ended_at) };
}

/** Asserts what the file shows; returns its duration as ffprobe reads it. */
export async function expectRecordedVisit(visit: RecordedVisit, label: string): Promise<number> {
  const wallOf = (at: number) => performance.timeOrigin + at;
  const probe = await probeFile(visit.path);
  const video = probe.streams.filter((s) => s.codec_type === 'video');
  const audio = probe.streams.filter((s) => s.codec_type === 'audio');
  expect(video.map((s) => s.codec_name)).toEqual(['h264']);
  expect(audio.map((s) => s.codec_name)).toEqual(['aac']);
  expect({ width: video[0]!.width, height: video[0]!.height }).toEqual(visit.size);
  const visitSeconds = (visit.endedAt - visit.streamedAt) / 1000;
  const duration = Number(probe.format.duration);
  console.log(`${label}: ${duration.toFixed(2)} s recorded of a ${visitSeconds.toFixed(2)} s visit`);
  // The job records from its first frame until it leaves, a little past the session's end
  // (2.0 s more seen on a loaded machine): longer by up to 3 s, shorter by at most 2.
  expect(duration).toBeGreaterThan(visitSeconds - 2);
  expect(duration).toBeLessThan(visitSeconds + 3);
  expect(Math.abs(duration - visit.recording.duration_seconds!)).toBeLessThan(0.5);

  // Both voices: loud where the visitor asked (the agent listens then) and where the agent spoke.
  const levels = await audioLevels(visit.path);
  const at = (wall: number) => Math.round(((wall - visit.streamedAt) / 1000) * AVATAR_FPS);
  const loudness = ({ from, to }: Span) => {
    const window = levels.slice(Math.max(0, at(wallOf(from)) + 5), Math.max(0, at(wallOf(to)) - 5));
    return window.length === 0 ? 0 : window.reduce((sum, level) => sum + level, 0) / window.length;
  };
  const quiet = percentile(levels, 0.1);
  const [greeted, asked, answered] = [loudness(visit.greeting), loudness(visit.question), loudness(visit.reply)];
  console.log(
    `${label}: mean rms greeting ${greeted.toFixed(0)}, question ${asked.toFixed(0)}, reply ${answered.toFixed(0)}, quietest tenth ${quiet.toFixed(0)}`,
  );
  expect(asked).toBeGreaterThan(Math.max(300, quiet * 5));
  expect(answered).toBeGreaterThan(Math.max(300, quiet * 5));
  expect(greeted).toBeGreaterThan(Math.max(300, quiet * 5));

  // The mouth with the agent's voice: the lag that best lines up the agent's loudness (the
  // visitor's question left out) with the motion in the lower middle of the frame.
  const motion = await mouthMotion(visit.path, visit.size);
  const [askedFrom, askedTo] = [at(wallOf(visit.question.from)), at(wallOf(visit.question.to))];
  const agentOnly = levels.map((level, i) => (i >= askedFrom - 5 && i <= askedTo + 5 ? 0 : level));
  const lag = bestLag(agentOnly, motion, 10);
  console.log(`${label}: mouth motion best follows the agent's audio at ${lag.frames * 40} ms (r=${lag.r.toFixed(2)})`);
  expect(lag.r).toBeGreaterThan(0.3);
  expect(Math.abs(lag.frames * (1000 / AVATAR_FPS))).toBeLessThanOrEqual(100);
  return duration;
}

/** The RMS of each 40 ms of the file's audio (16 kHz mono). */
async function audioLevels(path: string): Promise<number[]> {
  const proc = Bun.spawn(
    ['ffmpeg', '-v', 'error', '-i', path, '-vn', '-ac', '1', '-ar', String(CHECK_RATE), '-f', 's16le', '-'],
    { stdout: 'pipe' },
  );
  const pcm = new Int16Array((await new Response(proc.stdout).arrayBuffer()).slice(0));
  const levels: number[] = [];
  for (let start = 0; start + STEP_SAMPLES <= pcm.length; start += STEP_SAMPLES) {
    let sum = 0;
    for (let i = start; i < start + STEP_SAMPLES; i++) sum += pcm[i]! * pcm[i]!;
    levels.push(Math.sqrt(sum / STEP_SAMPLES));
  }
  return levels;
}

/**
 * How much the lower middle of each frame (where a framed face's mouth is) changed since the
 * frame before: the mean absolute difference of a small grey copy of that region.
 */
async function mouthMotion(path: string, size: { width: number; height: number }): Promise<number[]> {
  const [w, h] = [48, 32];
  const crop = `crop=${Math.round(size.width * 0.3)}:${Math.round(size.height * 0.3)}:${Math.round(size.width * 0.35)}:${Math.round(size.height * 0.5)}`;
  const proc = Bun.spawn(
    ['ffmpeg', '-v', 'error', '-i', path, '-an', '-vf', `${crop},scale=${w}:${h},format=gray`, '-f', 'rawvideo', '-'],
    { stdout: 'pipe' },
  );
  const frames = new Uint8Array(await new Response(proc.stdout).arrayBuffer());
  const motion: number[] = [0];
  for (let f = 1; (f + 1) * w * h <= frames.length; f++) {
    let sum = 0;
    for (let i = 0; i < w * h; i++) sum += Math.abs(frames[f * w * h + i]! - frames[(f - 1) * w * h + i]!);
    motion.push(sum / (w * h));
  }
  return motion;
}

/** The shift of `b` against `a` (in frames, ±range) with the highest correlation; positive: `b` lags. */
function bestLag(a: number[], b: number[], range: number): { frames: number; r: number } {
  let best = { frames: 0, r: -Infinity };
  for (let lag = -range; lag <= range; lag++) {
    const xs: number[] = [];
    const ys: number[] = [];
    for (let i = 0; i < a.length; i++) {
      const j = i + lag;
      if (j >= 0 && j < b.length) {
        xs.push(a[i]!);
        ys.push(b[j]!);
      }
    }
    const r = correlation(xs, ys);
    if (r > best.r) best = { frames: lag, r };
  }
  return best;
}

function correlation(xs: number[], ys: number[]): number {
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const [mx, my] = [mean(xs), mean(ys)];
  let [sxy, sxx, syy] = [0, 0, 0];
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  return sxx && syy ? sxy / Math.sqrt(sxx * syy) : 0;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(p * (sorted.length - 1))] ?? 0;
}
