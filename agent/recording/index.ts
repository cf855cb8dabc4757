// A session's recording, made in its job (contract/recordings.ts): each avatar tick hands
// over the frame the visitor saw and the agent's speech of that tick; the visitor's voice is
// mixed in from its own track, and ffmpeg (encoder.ts) encodes both in lockstep into
// fragmented MP4 that goes to the control plane in chunks as it is made (chunk-sender.ts).
// The visitor's camera is never recorded. Whatever fails here (ffmpeg, the network) is
// logged and ends the recording, never the conversation or the avatar's frames.
//
// Without frames of ours (a session without an avatar, or an avatar service that draws its
// own face in its own participant) the recording is audio only: an audio-only fragmented MP4,
// AAC. With an avatar service no runner ticks here: the recorder keeps its own 25 fps clock
// and takes the agent's speech from the service participant's audio track (followSpeaker).
import { type RemoteParticipant, type Room, TrackSource, VideoBufferType, type VideoFrame } from '@livekit/rtc-node';
import {
  AVATAR_FPS,
  AVATAR_SAMPLE_RATE,
  type FrameSize,
  RECORDING_CHUNK_MAX_BYTES,
  type RecordingPartDone,
} from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import type { AudioTake } from './audio-fifo.ts';
import { ChunkSender } from './chunk-sender.ts';
import { i420Bytes, RecordingEncoder } from './encoder.ts';
import { FragmentCutter } from './fragments.ts';
import { ParticipantAudio } from './participant-audio.ts';

export { AudioFifo, type AudioTake } from './audio-fifo.ts';
export { encoderArguments } from './encoder.ts';

const FRAME_MS = 1000 / AVATAR_FPS;
const SAMPLES_PER_FRAME = AVATAR_SAMPLE_RATE / AVATAR_FPS;
/**
 * ffmpeg gets this long to write its last fragment once its inputs close; then it is killed and
 * the part ends with the fragments it wrote. 3 s was not always enough on a loaded 2-core machine
 * (a full test run: the offline models busy on both cores); the job's shutdown allows 100 s.
 */
const ENCODER_FINISH_MS = 8_000;
/** The last chunks and `done` get this long on the network when the job leaves. */
const DEFAULT_NETWORK_WAIT_MS = 8_000;
/** A gap longer than this (a frame index far ahead) is not filled: something is wrong with the clock. */
const MAX_FILLED_FRAMES = 60 * AVATAR_FPS;

/** What the avatar runner calls on each tick (agent/avatar/runner.ts). */
export interface AvatarTap {
  /**
   * `frame`: what the visitor's video track got this tick (null: no face drawn here);
   * `samples`: the agent's speech of the tick (AVATAR_SAMPLE_RATE / AVATAR_FPS samples);
   * `frameIndex`: the tick's place on the runner's 25 fps grid, which jumps after a stall.
   */
  onTick(frame: VideoFrame | null, samples: Int16Array, frameIndex: number): void;
}

export interface SessionRecorderOptions {
  sessionId: string;
  /** The part: the LiveKit job id. */
  part: string;
  reportUrl: string;
  reportToken: string;
  /** The visitor's voice (ParticipantAudio in a job, an AudioFifo in tests); null: none. */
  visitorAudio: AudioTake | null;
  logger: Pick<AgentLogger, 'warn' | 'info'>;
  /** Chunk retries (tests shorten them). */
  retryDelaysMs?: readonly number[];
  ffmpeg?: string;
}

export class SessionRecorder implements AvatarTap {
  readonly #options: SessionRecorderOptions;
  readonly #sender: ChunkSender;
  readonly #cutter = new FragmentCutter(RECORDING_CHUNK_MAX_BYTES);
  #encoder: RecordingEncoder | undefined;
  #video: FrameSize | null = null;
  /** The runner's frame index of the first tick: frame indices count from it. */
  #firstIndex: number | undefined;
  /** Ticks written to ffmpeg (frames, or 40 ms of audio). */
  #written = 0;
  #dropped = 0;
  /** The last frame written, repeated over a stall. */
  #lastFrame: Uint8Array | undefined;
  #stopped = false;
  #clock: ReturnType<typeof setTimeout> | undefined;
  /** The avatar service's voice, when the recorder keeps its own clock. */
  #speaker: ParticipantAudio | undefined;
  #finished: Promise<RecordingPartDone | null> | undefined;

  constructor(options: SessionRecorderOptions) {
    this.#options = options;
    this.#sender = new ChunkSender({
      sessionId: options.sessionId,
      part: options.part,
      reportUrl: options.reportUrl,
      reportToken: options.reportToken,
      logger: options.logger,
      retryDelaysMs: options.retryDelaysMs,
    });
  }

  /** The recording's length so far, from the ticks written. */
  get durationMs(): number {
    return this.#written * FRAME_MS;
  }

  /** ffmpeg's process id while it runs (the CPU measurement reads it). */
  get encoderPid(): number | undefined {
    return this.#encoder?.pid;
  }

  onTick(frame: VideoFrame | null, samples: Int16Array, frameIndex: number): void {
    try {
      this.#tick(frame, samples, frameIndex);
    } catch (error) {
      // Never into the avatar's loop: the recording ends, the session goes on.
      this.#options.logger.warn({ err: error }, 'the recording failed; the session goes on unrecorded');
      this.#abandon();
    }
  }

  /**
   * For an avatar service: no runner ticks here, so the recorder keeps its own 25 fps clock
   * and records the speaker's voice (the service participant's audio track) audio only.
   */
  followSpeaker(room: Room, speaks: (participant: RemoteParticipant) => boolean): void {
    if (this.#stopped || this.#encoder) return;
    const speaker = new ParticipantAudio({ room, speaker: speaks, logger: this.#options.logger });
    this.#speaker = speaker;
    speaker.start();
    const startedAt = performance.now();
    let next = 0;
    const tick = () => {
      const due = Math.floor((performance.now() - startedAt) / FRAME_MS);
      // Behind after a stall: the ticks missed are written now, from what the voice queued meanwhile.
      for (; next <= due && !this.#stopped; next++) this.onTick(null, speaker.take(SAMPLES_PER_FRAME), next);
      if (!this.#stopped) this.#clock = setTimeout(tick, startedAt + next * FRAME_MS - performance.now());
    };
    tick();
  }

  /** Ends the recording: ffmpeg finishes, the last chunks and `done` are sent (all bounded). */
  stop(networkWaitMs = DEFAULT_NETWORK_WAIT_MS): Promise<RecordingPartDone | null> {
    this.#finished ??= this.#finish(networkWaitMs);
    return this.#finished;
  }

  #tick(frame: VideoFrame | null, samples: Int16Array, frameIndex: number): void {
    if (this.#stopped) return;
    if (this.#sender.ended) {
      // The control plane refused the part, or it is unreachable: no use encoding on.
      this.#abandon();
      return;
    }
    if (!this.#encoder) {
      this.#startEncoder(frame);
      // The visitor's voice heard before the first frame would otherwise start the file late by that much.
      this.#options.visitorAudio?.clear?.();
    }
    this.#firstIndex ??= frameIndex;
    const encoder = this.#encoder!;
    if (!encoder.running) return;
    const pixels = this.#pixelsOf(frame);
    // Ticks the runner skipped after a stall: the last picture again, with the visitor's
    // voice of that time and no speech, so the file lasts as long as the visit did.
    const gap = frameIndex - this.#firstIndex - this.#written - this.#dropped;
    for (let i = 0; i < Math.min(gap, MAX_FILLED_FRAMES); i++)
      this.#write(this.#lastFrame ?? pixels, new Int16Array(SAMPLES_PER_FRAME));
    this.#write(pixels, samples);
    this.#lastFrame = pixels ?? this.#lastFrame;
  }

  #write(pixels: Uint8Array | null, speech: Int16Array): void {
    const mixed = mix(speech, this.#options.visitorAudio?.take(SAMPLES_PER_FRAME));
    if (this.#encoder!.write(pixels, mixed)) {
      this.#written++;
      return;
    }
    if (!this.#encoder!.running) return;
    // ffmpeg is behind (no CPU to spare): this tick is lost, picture and sound alike, so they stay together.
    if (this.#dropped++ === 0) this.#options.logger.warn('the recording encoder is behind; ticks are dropped');
  }

  #startEncoder(frame: VideoFrame | null): void {
    this.#sender.markStarted();
    this.#video = frame ? { width: frame.width, height: frame.height } : null;
    this.#encoder = new RecordingEncoder({
      video: this.#video,
      ffmpeg: this.#options.ffmpeg,
      onOutput: (data) => {
        for (const chunk of this.#cutter.push(data)) this.#sender.send(chunk, this.durationMs);
      },
      onExit: ({ code, signal, expected, stderr }) => {
        if (expected && code === 0) return;
        this.#options.logger.warn(
          { code, signal, stderr, part: this.#options.part },
          expected
            ? 'the recording encoder did not finish cleanly'
            : 'the recording encoder stopped; the session goes on unrecorded',
        );
        // Died mid-session: what it made is sent and the part closed now, not at the session's end.
        if (!expected) this.#abandon();
      },
    });
    this.#options.logger.info(
      { part: this.#options.part, video: this.#video, pid: this.#encoder.pid },
      this.#video ? 'recording the session' : 'recording the session, audio only',
    );
  }

  /** The tick's picture as I420 bytes of the recording's size, copied (renderers reuse their buffer); null when audio only. */
  #pixelsOf(frame: VideoFrame | null): Uint8Array | null {
    const video = this.#video;
    if (!video) return null;
    if (!frame || frame.width !== video.width || frame.height !== video.height) return this.#lastFrame ?? null;
    const i420 = frame.type === VideoBufferType.I420 ? frame : frame.convert(VideoBufferType.I420);
    return i420.data.slice(0, i420Bytes(video));
  }

  #abandon(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#clock);
    void this.stop();
  }

  async #finish(networkWaitMs: number): Promise<RecordingPartDone | null> {
    this.#stopped = true;
    clearTimeout(this.#clock);
    this.#speaker?.close();
    if (!this.#encoder) return null; // never ticked: nothing was recorded, no part to close
    await this.#encoder.finish(ENCODER_FINISH_MS);
    const { chunks, droppedBytes } = this.#cutter.flush();
    for (const chunk of chunks) this.#sender.send(chunk, this.durationMs);
    if (droppedBytes > 0)
      this.#options.logger.warn({ bytes: droppedBytes }, "the recording's unfinished fragment was left out");
    const done = await this.#sender.finish(this.durationMs, networkWaitMs);
    if (done)
      this.#options.logger.info({ part: this.#options.part, ...done, dropped_ticks: this.#dropped }, 'recording sent');
    return done;
  }
}

/** The two voices, summed with saturation (a shout over speech clips rather than wraps around). */
export function mix(speech: Int16Array, visitor: Int16Array | undefined): Int16Array {
  const mixed = new Int16Array(SAMPLES_PER_FRAME);
  for (let i = 0; i < SAMPLES_PER_FRAME; i++) {
    const sum = (speech[i] ?? 0) + (visitor?.[i] ?? 0);
    mixed[i] = sum > 32767 ? 32767 : sum < -32768 ? -32768 : sum;
  }
  return mixed;
}

export interface JobRecordingOptions {
  room: Room;
  sessionId: string;
  part: string;
  reportUrl: string;
  reportToken: string;
  visitorIdentity: string;
  logger: Pick<AgentLogger, 'warn' | 'info'>;
}

/** A job's recorder: the visitor's microphone followed in the room, the recorder ticked by the avatar. */
export function recordJob(options: JobRecordingOptions): { recorder: SessionRecorder; stop(): Promise<void> } {
  const visitor = new ParticipantAudio({
    room: options.room,
    speaker: (participant) => participant.identity === options.visitorIdentity,
    source: TrackSource.SOURCE_MICROPHONE,
    logger: options.logger,
  });
  visitor.start();
  const recorder = new SessionRecorder({ ...options, visitorAudio: visitor });
  return {
    recorder,
    async stop() {
      try {
        await recorder.stop();
      } finally {
        visitor.close();
      }
    },
  };
}
