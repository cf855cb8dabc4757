// What paces and publishes the avatar (Python's `AvatarRunner` role): a 25 fps clock that,
// each tick, takes one frame's worth of speech, asks the renderer for the matching frame
// and hands both to LiveKit, so picture and voice leave together. While the avatar listens
// its frames keep flowing and its voice, half a second after its last words, goes quiet.
import {
  AudioFrame,
  AudioSource,
  LocalAudioTrack,
  type LocalTrack,
  type LocalTrackPublication,
  LocalVideoTrack,
  type Room,
  RoomEvent,
  TrackPublishOptions,
  TrackSource,
  VideoCodec,
  type VideoFrame,
  VideoSource,
} from '@livekit/rtc-node';
import { loadAgentSettings } from '../../src/config.ts';
import {
  AVATAR_AUDIO_TRACK,
  AVATAR_FPS,
  AVATAR_SAMPLE_RATE,
  AVATAR_VIDEO_TRACK,
  type AvatarVideoCodec,
  VOICE_TRACK,
} from '../../src/contract/index.ts';
import type { VideoTally } from '../conversation/quality.ts';
import type { AgentLogger } from '../logging.ts';
import type { AvatarRenderer } from '../pipelines/index.ts';
import type { AvatarTap } from '../recording/index.ts';
import type { AvatarSpeech } from './speech.ts';
import { TestMark } from './test-mark.ts';

const FRAME_MS = 1000 / AVATAR_FPS;
const SAMPLES_PER_FRAME = (AVATAR_SAMPLE_RATE * FRAME_MS) / 1000;
const MAX_BITRATE_BPS = 1_500_000n;
const VIDEO_CODECS: Record<AvatarVideoCodec, VideoCodec> = { h264: VideoCodec.H264, vp8: VideoCodec.VP8 };
/**
 * libwebrtc's "disabled" adaptation (rtc-ffi's MAINTAIN_FRAMERATE_AND_RESOLUTION; the enum
 * is not exported by rtc-node). Its default keeps the resolution and sheds frames when the
 * CPU is busy, and lips at 20 fps look off: the avatar keeps its 25 fps and its size.
 */
const KEEP_FRAMERATE_AND_RESOLUTION = 4;
/** Direct capture (no queue in LiveKit) takes 10 ms frames: each tick's 40 ms goes as four. */
const AUDIO_FRAME_SAMPLES = AVATAR_SAMPLE_RATE / 100;
/**
 * After speech the voice sends silence this long, then nothing until the next words. A
 * queued source pads with silence on its own, and Opus encodes it: about 2 % of a core per
 * session while the avatar listens (docs/benchmarks.md, issue 48). The visitor's WebRTC plays
 * silence through the pause; the next words arrive with no added delay (measured after
 * pauses of 3 and 10 s). The tail bridges the short pauses between a reply's sentences.
 */
const QUIET_AFTER_TICKS = Math.round(500 / FRAME_MS);
/** An unpublish answers within milliseconds; one that does not, the job leaves behind. */
const UNPUBLISH_WITHIN_MS = 2_000;
/**
 * Until someone watches the face, its last frame is handed over again every this many ticks
 * (5 fps) instead of a new one drawn each: drawing is most of an unwatched session's CPU (an
 * audio-only visitor, a room waiting for its visitor). The encoder keeps a picture to send at
 * once when a visitor subscribes; the drawing resumes at the subscription.
 */
const UNWATCHED_FRAME_EVERY_TICKS = 5;

export interface AvatarRunnerOptions {
  room: Room;
  /** Null: a voice without a face (a session without an avatar); only the audio is published. */
  renderer: AvatarRenderer | null;
  /** The renderer's `prepare()`, already under way: the tracks are published meanwhile. */
  rendererReady: Promise<void>;
  speech: AvatarSpeech;
  /** Called once, right after the first frame was handed to the published track, with `performance.now()`. */
  onFirstFrame(atMs: number): void;
  logger: Pick<AgentLogger, 'warn'>;
  /** A test session: every frame carries the "TEST" mark (test-mark.ts). */
  testMark?: boolean;
  /** A recorded session: given each tick's frame (null without a face) and speech, as published (agent/recording). */
  recorder?: AvatarTap;
}

export class AvatarRunner {
  readonly #options: AvatarRunnerOptions;
  readonly #testMark: TestMark | undefined;
  #stopped = false;
  #videoSource: VideoSource | undefined;
  #audioSource: AudioSource | undefined;
  #publications: LocalTrackPublication[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** performance.now() of frame 0; frame k is due at #startedAt + k·FRAME_MS. */
  #startedAt = 0;
  #frameIndex = 0;
  /** Frames drawn and published since someone first watched (the session's delivered fps). */
  #framesPublished = 0;
  /** performance.now() of the first subscription to the face's video; undefined while nobody watched. */
  #watchedSince: number | undefined;
  /** The last frame handed over: handed again, not redrawn, while nobody watches. */
  #lastFrame: VideoFrame | null = null;
  #firstFrameSent = false;
  /** Whether the visitor is speaking; undefined until the conversation says. */
  #visitorSpeaking: boolean | undefined;
  /** Audio frames are handed over one after another, never concurrently. */
  #audioChain: Promise<void> = Promise.resolve();
  /** Ticks since the voice last carried speech (it goes quiet after QUIET_AFTER_TICKS). */
  #ticksSinceSpeech = Number.POSITIVE_INFINITY;
  #heard!: () => void;
  /** Settles once a participant (the visitor) has subscribed to the speech track: words from then on reach them. */
  readonly audible = new Promise<void>((resolve) => (this.#heard = resolve));
  /** Listens for the subscriptions to speech and face; removed once both came or stopped (a visitor may never subscribe). */
  #onSubscribed: ((track: LocalTrack) => void) | undefined;

  constructor(options: AvatarRunnerOptions) {
    this.#options = options;
    this.#testMark = options.testMark ? new TestMark() : undefined;
  }

  async start(): Promise<void> {
    const { room, renderer } = this.#options;
    // No queue: the runner paces in real time, an interruption leaves nothing behind in
    // LiveKit, and nothing is encoded while the avatar is quiet.
    this.#audioSource = new AudioSource(AVATAR_SAMPLE_RATE, 1, 0);
    const participant = room.localParticipant!;
    const audioTrackName = renderer ? AVATAR_AUDIO_TRACK : VOICE_TRACK;
    // LiveKit says so once per track, at its first subscriber: a face once watched is drawn from
    // then on (a watcher who unsubscribes without leaving is rare; drawing on is the safe side).
    let heard = false;
    this.#onSubscribed = (track: LocalTrack) => {
      if (track.name === audioTrackName && !heard) {
        heard = true;
        this.#heard();
      }
      if (track.name === AVATAR_VIDEO_TRACK) this.#watchedSince ??= performance.now();
      if (heard && (!renderer || this.#watchedSince !== undefined))
        room.off(RoomEvent.LocalTrackSubscribed, this.#onSubscribed!);
    };
    room.on(RoomEvent.LocalTrackSubscribed, this.#onSubscribed);
    // Both tracks at once, while the face still loads: the visitor's first frame waits for the
    // slowest of the three, not their sum.
    const publishing: Promise<LocalTrackPublication>[] = [];
    if (renderer) {
      const { width, height } = renderer.size;
      this.#videoSource = new VideoSource(width, height);
      publishing.push(
        participant.publishTrack(
          LocalVideoTrack.createVideoTrack(AVATAR_VIDEO_TRACK, this.#videoSource),
          new TrackPublishOptions({
            source: TrackSource.SOURCE_CAMERA,
            // One visitor watches each session: a single layer, no simulcast encodes to pay for.
            simulcast: false,
            videoEncoding: { maxBitrate: MAX_BITRATE_BPS, maxFramerate: AVATAR_FPS },
            degradationPreference: KEEP_FRAMERATE_AND_RESOLUTION,
            videoCodec: VIDEO_CODECS[loadAgentSettings().avatarVideoCodec],
          }),
        ),
      );
    }
    publishing.push(
      participant.publishTrack(
        LocalAudioTrack.createAudioTrack(audioTrackName, this.#audioSource),
        new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
      ),
    );
    const [published] = await Promise.all([Promise.all(publishing), this.#options.rendererReady]);
    if (this.#stopped) {
      // Stopped while publishing: stop() did not see these yet.
      for (const publication of published) await this.#unpublish(publication);
      return;
    }
    this.#publications.push(...published);
    this.#startedAt = performance.now();
    this.#frameIndex = 0;
    this.#tick();
  }

  /** LiveKit's ids of the tracks published (none before `start()` resolved). */
  get trackSids(): string[] {
    return this.#publications.flatMap((publication) => (publication.sid ? [publication.sid] : []));
  }

  /**
   * Frames drawn and handed to the published track since someone first watched, and for how
   * long (the session's delivered fps): frames skipped after a stall are not counted, nor the
   * time nobody watched.
   */
  get videoTally(): VideoTally {
    const since = this.#watchedSince;
    return { frames: this.#framesPublished, watchedMs: since === undefined ? 0 : performance.now() - since };
  }

  /** The visitor started or stopped speaking (the renderer's listening nods follow their pauses). */
  setVisitorSpeaking(speaking: boolean): void {
    this.#visitorSpeaking = speaking;
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#timer);
    if (this.#onSubscribed) this.#options.room.off(RoomEvent.LocalTrackSubscribed, this.#onSubscribed);
    for (const publication of this.#publications) await this.#unpublish(publication);
    await this.#videoSource?.close();
    await this.#audioSource?.close();
  }

  /** Bounded: a connection that never came up (avatar/delivery.ts) must not hold the job's end. */
  async #unpublish(publication: LocalTrackPublication): Promise<void> {
    const room = this.#options.room;
    if (!publication.sid || !room.isConnected) return;
    const unpublished = room.localParticipant!.unpublishTrack(publication.sid).catch(() => undefined);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.#options.logger.warn({ track_sid: publication.sid }, 'unpublishing a track did not finish; leaving it');
        resolve();
      }, UNPUBLISH_WITHIN_MS);
    });
    await Promise.race([unpublished, late]);
    clearTimeout(timer);
  }

  #tick = (): void => {
    if (this.#stopped) return;
    const now = performance.now();
    const elapsedMs = this.#frameIndex * FRAME_MS;
    const slice = this.#options.speech.take(SAMPLES_PER_FRAME);
    let frame: VideoFrame | null = null;
    try {
      const renderer = this.#options.renderer;
      // A recording needs every frame drawn, watched or not.
      const drawn = this.#watchedSince !== undefined || this.#options.recorder || !this.#lastFrame;
      if (renderer && drawn) {
        const picture = renderer.nextFrame({
          audio: slice.samples,
          speechSamples: slice.speechSamples,
          visemes: slice.visemes,
          stressed: slice.stressed,
          visitorSpeaking: this.#visitorSpeaking,
          elapsedMs,
        });
        frame = this.#testMark ? this.#testMark.apply(picture) : picture;
        // The source copies the pixels before returning, so renderers may reuse their buffer.
        this.#videoSource!.captureFrame(frame, BigInt(Math.round(elapsedMs * 1000)));
        this.#lastFrame = frame;
        if (this.#watchedSince !== undefined) this.#framesPublished++;
      } else if (renderer && this.#frameIndex % UNWATCHED_FRAME_EVERY_TICKS === 0) {
        // The buffer still holds the last picture: nothing drew into it since.
        this.#videoSource!.captureFrame(this.#lastFrame!, BigInt(Math.round(elapsedMs * 1000)));
      }
    } catch (error) {
      if (!this.#stopped) this.#options.logger.warn({ err: error }, 'the avatar stopped streaming');
      return;
    }
    // Before the renderer draws again into the same buffer; the recorder never throws.
    this.#options.recorder?.onTick(frame, slice.samples, this.#frameIndex);
    this.#ticksSinceSpeech = slice.speechSamples > 0 ? 0 : this.#ticksSinceSpeech + 1;
    if (this.#ticksSinceSpeech <= QUIET_AFTER_TICKS) this.#sendAudio(this.#audioSource!, slice.samples);
    if (!this.#firstFrameSent) {
      this.#firstFrameSent = true;
      this.#options.onFirstFrame(now);
    }
    this.#frameIndex++;
    this.#schedule();
  };

  #sendAudio(source: AudioSource, samples: Int16Array): void {
    for (let at = 0; at < samples.length; at += AUDIO_FRAME_SAMPLES) {
      const frame = new AudioFrame(
        samples.slice(at, at + AUDIO_FRAME_SAMPLES),
        AVATAR_SAMPLE_RATE,
        1,
        AUDIO_FRAME_SAMPLES,
      );
      this.#audioChain = this.#audioChain.then(() => source.captureFrame(frame)).catch(() => undefined);
    }
  }

  /**
   * Frames are due on a grid from the start, so timer lateness never accumulates. A stall
   * renders the missed frames at once (their audio must go out in order, or the voice
   * would drop words) up to half a second; beyond that they are skipped.
   */
  #schedule(): void {
    const now = performance.now();
    let due = this.#startedAt + this.#frameIndex * FRAME_MS;
    if (now - due > 500) {
      this.#frameIndex = Math.ceil((now - this.#startedAt) / FRAME_MS);
      due = this.#startedAt + this.#frameIndex * FRAME_MS;
    }
    this.#timer = setTimeout(this.#tick, Math.max(0, due - now));
  }
}
