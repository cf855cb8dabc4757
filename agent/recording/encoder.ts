// The ffmpeg child that encodes a recording: raw I420 frames on stdin (pipe:0) and the mixed
// voices as s16le on a pipe of their own (fd 3), written tick by tick in lockstep, so the
// file's picture and sound stay together by construction (frame k and samples k·1920… are
// written together and both inputs run on the same 25 fps grid). Out on stdout: fragmented
// MP4 (H.264 + AAC), a fragment every keyframe (every 2 s), cut into chunks by fragments.ts.
// A session whose frames we do not hold (a voice alone, or an avatar service) records audio
// only: an audio-only fragmented MP4, AAC, a fragment every 2 s.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { AVATAR_FPS, AVATAR_SAMPLE_RATE, type FrameSize, RECORDING_CHUNK_SECONDS } from '../../src/contract/index.ts';

/** Debian's ffmpeg, as the bootstrap installs it (src/bootstrap/ffmpeg.mjs), else the one on PATH. */
const DEBIAN_FFMPEG = '/usr/bin/ffmpeg';
export function ffmpegPath(): string {
  return existsSync(DEBIAN_FFMPEG) ? DEBIAN_FFMPEG : 'ffmpeg';
}

/**
 * Ticks wait in a queue of ours and go to ffmpeg a few frames ahead of what it has read, so a
 * stall's filled ticks (the same frame again, written at once) never overfill the pipe. The
 * queue holds at most a second of distinct frames (a repeated frame costs only its audio);
 * beyond it, an encoder that falls behind (a machine out of CPU) costs the recording ticks,
 * never the job memory.
 */
const MAX_QUEUED_SECONDS = 1;
const PIPE_AHEAD_FRAMES = 4;
/** The avatar moves little: a constant quality that keeps a face sharp at about 0.3–1 Mbit/s. */
const VIDEO_CRF = '26';
const AUDIO_BITRATE = '96k';
const AAC_PRIMING_SAMPLES = 1024;
/** The last words ffmpeg said, kept for the warning when it fails. */
const STDERR_KEEP_CHARS = 2_000;

export function encoderArguments(video: FrameSize | null): string[] {
  const keyframeEvery = String(AVATAR_FPS * RECORDING_CHUNK_SECONDS);
  // Raw inputs whose format is given: nothing to probe. Probing would read seconds of audio
  // before the first frame, and the ticks are written in lockstep, a few frames ahead at most.
  const raw = ['-probesize', '32', '-analyzeduration', '0'];
  const audioIn = [...raw, '-f', 's16le', '-ar', String(AVATAR_SAMPLE_RATE), '-ac', '1', '-i', 'pipe:3'];
  // ffmpeg's AAC encoder starts with 1024 samples of priming, which a fragmented MP4 cannot
  // mark to be skipped (its moov is written before the first packet): players would play it
  // and the voices would be 21 ms late on the picture. The input's first 1024 samples go
  // instead, so what is decoded at t is what was heard at t.
  const audioOut = [
    '-af',
    `atrim=start_sample=${AAC_PRIMING_SAMPLES},asetpts=N/SR/TB`,
    '-c:a',
    'aac',
    '-b:a',
    AUDIO_BITRATE,
  ];
  const common = ['-hide_banner', '-loglevel', 'error', '-nostdin'];
  if (!video) {
    return [
      ...common,
      ...audioIn,
      ...audioOut,
      // Every AAC frame is a keyframe: fragments are cut by time instead (µs).
      '-frag_duration',
      String(RECORDING_CHUNK_SECONDS * 1_000_000),
      '-movflags',
      'empty_moov+default_base_moof',
      '-f',
      'mp4',
      'pipe:1',
    ];
  }
  return [
    ...common,
    ...[
      '-f',
      'rawvideo',
      '-pix_fmt',
      'yuv420p',
      '-s',
      `${video.width}x${video.height}`,
      '-framerate',
      String(AVATAR_FPS),
    ],
    ...['-i', 'pipe:0'],
    ...audioIn,
    ...['-map', '0:v', '-map', '1:a'],
    // ultrafast + zerolatency: the cheapest x264 (no lookahead, no B-frames) beside a renderer
    // that needs the cores; one thread, so a session's encoder stays on one core.
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-crf', VIDEO_CRF, '-threads', '1'],
    // A keyframe every 2 s and only there: each fragment (and chunk) starts with one.
    ...['-pix_fmt', 'yuv420p', '-g', keyframeEvery, '-keyint_min', keyframeEvery, '-sc_threshold', '0'],
    ...audioOut,
    ...['-movflags', 'frag_keyframe+empty_moov+default_base_moof', '-f', 'mp4', 'pipe:1'],
  ];
}

export interface EncoderOptions {
  /** Null: audio only. */
  video: FrameSize | null;
  /** ffmpeg's output as it comes. */
  onOutput(data: Uint8Array): void;
  /** ffmpeg ended: `expected` when its inputs were closed first, otherwise it died. */
  onExit(exit: { code: number | null; signal: string | null; expected: boolean; stderr: string }): void;
  ffmpeg?: string;
}

export class RecordingEncoder {
  readonly #child: ChildProcess;
  readonly #video: Writable | null;
  readonly #audio: Writable;
  readonly #maxQueuedBytes: number;
  readonly #pipeAheadBytes: number;
  #queue: { frame: Uint8Array | null; audio: Uint8Array; bytes: number }[] = [];
  #queuedBytes = 0;
  /**
   * Bytes handed to the pipes that ffmpeg has not taken yet, counted by the writes' callbacks
   * (Bun's child pipes report no writableLength).
   */
  #inPipes = 0;
  #lastQueuedFrame: Uint8Array | null = null;
  /** The inputs close once the queue is written. */
  #ending = false;
  #exited = false;
  #stderr = '';
  readonly exited: Promise<void>;

  constructor(options: EncoderOptions) {
    const { video } = options;
    this.#child = spawn(options.ffmpeg ?? ffmpegPath(), encoderArguments(video), {
      stdio: [video ? 'pipe' : 'ignore', 'pipe', 'pipe', 'pipe'],
    });
    this.#video = video ? this.#child.stdin : null;
    this.#audio = this.#child.stdio[3] as Writable;
    const frameBytes = video ? i420Bytes(video) : 0;
    const audioBytes = (2 * AVATAR_SAMPLE_RATE) / AVATAR_FPS;
    this.#maxQueuedBytes = MAX_QUEUED_SECONDS * AVATAR_FPS * (frameBytes + audioBytes);
    this.#pipeAheadBytes = PIPE_AHEAD_FRAMES * (frameBytes + audioBytes);
    // A pipe closed under us (ffmpeg died) is reported by the exit, not thrown into the loop.
    this.#video?.on('error', () => undefined);
    this.#audio.on('error', () => undefined);
    this.#child.stdout!.on('data', (data: Uint8Array) => options.onOutput(data));
    this.#child.stderr!.on('data', (data: Buffer) => {
      this.#stderr = (this.#stderr + data.toString()).slice(-STDERR_KEEP_CHARS);
    });
    this.exited = new Promise((resolve) => {
      // 'close': after stdout's last bytes were read, so nothing ffmpeg wrote is missed.
      this.#child.once('close', (code, signal) => {
        this.#exited = true;
        options.onExit({ code, signal, expected: this.#ending, stderr: this.#stderr.trim() });
        resolve();
      });
      this.#child.once('error', (error) => {
        if (this.#exited) return;
        this.#exited = true;
        options.onExit({ code: null, signal: null, expected: false, stderr: String(error) });
        resolve();
      });
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Whether ffmpeg still takes input. */
  get running(): boolean {
    return !this.#exited && !this.#ending;
  }

  /**
   * One tick: its frame (I420, the size given; null when audio only) and its samples. Returns
   * false when the tick was not taken (ffmpeg gone, or too far behind).
   */
  write(frame: Uint8Array | null, samples: Int16Array): boolean {
    if (!this.running || (this.#video !== null) !== (frame !== null)) return false;
    const audio = new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
    const bytes = audio.length + (frame && frame !== this.#lastQueuedFrame ? frame.length : 0);
    if (this.#queuedBytes + bytes > this.#maxQueuedBytes) return false;
    this.#queue.push({ frame, audio, bytes });
    this.#queuedBytes += bytes;
    this.#lastQueuedFrame = frame;
    this.#pump();
    return true;
  }

  /** Hands queued ticks to the pipes while ffmpeg keeps up; each write taken calls it again. */
  #pump = (): void => {
    if (this.#exited) return;
    while (this.#queue.length > 0 && this.#inPipes < this.#pipeAheadBytes) {
      const tick = this.#queue.shift()!;
      this.#queuedBytes -= tick.bytes;
      if (tick.frame) this.#send(this.#video!, tick.frame);
      this.#send(this.#audio, tick.audio);
    }
    if (this.#ending && this.#queue.length === 0 && !this.#audio.writableEnded) {
      this.#video?.end();
      this.#audio.end();
    }
  };

  #send(pipe: Writable, bytes: Uint8Array): void {
    this.#inPipes += bytes.length;
    pipe.write(bytes, () => {
      this.#inPipes -= bytes.length;
      this.#pump();
    });
  }

  /** Closes the inputs once the queue is written and waits for ffmpeg to write the rest, killing it after `waitMs`. */
  async finish(waitMs: number): Promise<void> {
    if (!this.#exited && !this.#ending) {
      this.#ending = true;
      this.#pump();
    }
    const finished = await Promise.race([this.exited.then(() => true), Bun.sleep(waitMs).then(() => false)]);
    if (!finished) {
      this.#child.kill('SIGKILL');
      await this.exited;
    }
  }

  /** Stops ffmpeg at once (the recording is abandoned). */
  kill(): void {
    this.#ending = true;
    if (!this.#exited) this.#child.kill('SIGKILL');
  }
}

export function i420Bytes({ width, height }: FrameSize): number {
  return width * height + 2 * Math.ceil(width / 2) * Math.ceil(height / 2);
}
