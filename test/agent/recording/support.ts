// What the recording suites share: a stand-in for the control plane's chunk routes (Bun.serve),
// synthetic frames and tones, and the real ffprobe/ffmpeg reading the joined file back.
import { VideoBufferType, VideoFrame } from '@livekit/rtc-node';
import { SessionRecorder, type SessionRecorderOptions } from '../../../agent/recording/index.ts';
import { AVATAR_FPS, AVATAR_SAMPLE_RATE, type FrameSize } from '../../../src/contract/index.ts';

export const SAMPLES_PER_TICK = AVATAR_SAMPLE_RATE / AVATAR_FPS;
export const TOKEN = 'rt_recording_test_token';
export const SESSION_ID = 'ses_recording_test';
export const PART = 'AJ_test_part_1';

export interface ReceivedChunk {
  n: number;
  bytes: Uint8Array;
  authorization: string | null;
  contentLength: string | null;
}

/** Answers each request: a status by chunk number and attempt (default 200). */
export type Answer = (request: { kind: 'chunk' | 'done'; n: number; attempt: number }) => number;

export function controlPlane(answer: Answer = () => 200) {
  const chunks = new Map<number, ReceivedChunk>();
  const attempts = new Map<string, number>();
  const requests: { kind: 'chunk' | 'done'; n: number; status: number }[] = [];
  let done: { body: unknown; authorization: string | null } | undefined;
  const server = Bun.serve({
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const chunk = url.pathname.match(/^\/internal\/sessions\/(ses_\w+)\/recording\/parts\/(\w+)\/chunks\/(\d+)$/);
      const closing = url.pathname.match(/^\/internal\/sessions\/(ses_\w+)\/recording\/parts\/(\w+)\/done$/);
      const kind = chunk && request.method === 'PUT' ? 'chunk' : closing && request.method === 'POST' ? 'done' : null;
      if (!kind) return new Response('not found', { status: 404 });
      const n = kind === 'chunk' ? Number(chunk![3]) : -1;
      const key = `${kind}:${n}`;
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      const status = answer({ kind, n, attempt });
      requests.push({ kind, n, status });
      const bytes = new Uint8Array(await request.arrayBuffer());
      if (status >= 200 && status < 300) {
        const authorization = request.headers.get('authorization');
        if (kind === 'chunk')
          chunks.set(n, { n, bytes, authorization, contentLength: request.headers.get('content-length') });
        else done = { body: JSON.parse(new TextDecoder().decode(bytes)), authorization };
      }
      return new Response(null, { status: status === 200 ? 204 : status });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/internal/sessions/${SESSION_ID}/reports`,
    chunks,
    requests,
    attempts,
    get done() {
      return done;
    },
    /** The part's chunks joined in order. */
    joined(): Uint8Array {
      const ordered = [...chunks.values()].sort((a, b) => a.n - b.n);
      return Buffer.concat(ordered.map((c) => c.bytes));
    },
    stop: () => server.stop(true),
  };
}

/** An I420 frame, every pixel of one luma (16 black … 235 white), grey chroma. */
export function flatFrame({ width, height }: FrameSize, luma: number): VideoFrame {
  const data = new Uint8Array(width * height * 1.5).fill(128);
  data.fill(luma, 0, width * height);
  return new VideoFrame(data, width, height, VideoBufferType.I420);
}

/** One tick of a sine, continuing its phase from the tick's place in time. */
export function toneTick(hz: number, tick: number, amplitude = 8_000): Int16Array {
  const samples = new Int16Array(SAMPLES_PER_TICK);
  for (let i = 0; i < samples.length; i++) {
    const t = (tick * SAMPLES_PER_TICK + i) / AVATAR_SAMPLE_RATE;
    samples[i] = Math.round(amplitude * Math.sin(2 * Math.PI * hz * t));
  }
  return samples;
}

export interface Probe {
  duration: number;
  streams: { codec_type: string; codec_name: string; width?: number; height?: number; start_time?: string }[];
}

export async function ffprobe(path: string): Promise<Probe> {
  const child = Bun.spawn(
    [
      '/usr/bin/ffprobe',
      '-v',
      'error',
      '-show_entries',
      'format=duration:stream=codec_type,codec_name,width,height,start_time',
      '-of',
      'json',
      path,
    ],
    { stdout: 'pipe', stderr: 'pipe' },
  );
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  if (code !== 0) throw new Error(`ffprobe failed: ${err}`);
  const json = JSON.parse(out) as { format: { duration: string }; streams: Probe['streams'] };
  return { duration: Number(json.format.duration), streams: json.streams };
}

async function decode(args: string[]): Promise<Uint8Array> {
  const child = Bun.spawn(['/usr/bin/ffmpeg', '-v', 'error', ...args], { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).arrayBuffer(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  if (code !== 0) throw new Error(`ffmpeg failed: ${err}`);
  return new Uint8Array(out);
}

/** Each decoded frame's mean luma, in order (frames scaled to 8×8 grey). */
export async function frameLumas(path: string): Promise<number[]> {
  const raw = await decode([
    '-i',
    path,
    '-map',
    '0:v',
    '-fps_mode',
    'passthrough',
    '-vf',
    'scale=8:8',
    '-pix_fmt',
    'gray',
    '-f',
    'rawvideo',
    'pipe:1',
  ]);
  const lumas: number[] = [];
  for (let at = 0; at + 64 <= raw.length; at += 64)
    lumas.push(raw.subarray(at, at + 64).reduce((a, b) => a + b, 0) / 64);
  return lumas;
}

/** The file's audio, decoded to mono samples at the avatar's rate. */
export async function decodedAudio(path: string): Promise<Int16Array> {
  const raw = await decode([
    '-i',
    path,
    '-map',
    '0:a',
    '-f',
    's16le',
    '-ac',
    '1',
    '-ar',
    String(AVATAR_SAMPLE_RATE),
    'pipe:1',
  ]);
  return new Int16Array(raw.buffer, raw.byteOffset, Math.floor(raw.byteLength / 2));
}

/** A frequency's strength in samples [from, to) (Goertzel), normalised to the sine's amplitude. */
export function toneStrength(samples: Int16Array, hz: number, from: number, to: number): number {
  const omega = (2 * Math.PI * hz) / AVATAR_SAMPLE_RATE;
  const coefficient = 2 * Math.cos(omega);
  let previous = 0;
  let beforePrevious = 0;
  for (let i = Math.max(0, from); i < Math.min(to, samples.length); i++) {
    const current = samples[i]! + coefficient * previous - beforePrevious;
    beforePrevious = previous;
    previous = current;
  }
  const power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious;
  return (2 * Math.sqrt(Math.max(0, power))) / Math.max(1, to - from);
}

/** The first sample where a 5 ms window's RMS passes `threshold`. */
export function onsetSample(samples: Int16Array, threshold: number): number {
  const window = AVATAR_SAMPLE_RATE / 200;
  for (let at = 0; at + window <= samples.length; at += window / 5) {
    let sum = 0;
    for (let i = at; i < at + window; i++) sum += samples[i]! * samples[i]!;
    if (Math.sqrt(sum / window) > threshold) return at;
  }
  return -1;
}

export const quietLogger = { warn: () => {}, info: () => {} };

/**
 * A logger that keeps its warnings, to check what the recorder said. "The encoder is behind" is
 * the machine's, not the code's (these tests write ticks faster than real time, and a loaded run
 * leaves ffmpeg behind): it is counted in `behind`, not kept among the warnings, and the ticks it
 * cost (the recorder's "recording sent" line) in `droppedTicks`: the part is that much shorter.
 */
export function keptLogger() {
  const logger = {
    warnings: [] as string[],
    /** Each warning's fields (ffmpeg's exit code, signal and stderr…), printed when a test fails on one. */
    details: [] as unknown[],
    behind: 0,
    droppedTicks: 0,
    info(fields: unknown) {
      const dropped = (fields as { dropped_ticks?: unknown } | undefined)?.dropped_ticks;
      if (typeof dropped === 'number') logger.droppedTicks = dropped;
    },
    warn(fields: unknown, message?: string) {
      const text = typeof fields === 'string' ? fields : (message ?? '');
      if (text.includes('encoder is behind')) logger.behind++;
      else {
        logger.warnings.push(text);
        logger.details.push(fields);
        console.log(`recorder warning: ${text} ${typeof fields === 'string' ? '' : JSON.stringify(fields)}`);
      }
    },
  };
  return logger;
}

/** A recorder of SESSION_ID's PART sending to `plane` with TOKEN, logging to a keptLogger; no visitor audio unless given. */
export function recorderTo(plane: { url: string }, options: Partial<SessionRecorderOptions> = {}) {
  const logger = keptLogger();
  const recorder = new SessionRecorder({
    sessionId: SESSION_ID,
    part: PART,
    reportUrl: plane.url,
    reportToken: TOKEN,
    visitorAudio: null,
    logger,
    ...options,
  });
  return { logger, recorder };
}
