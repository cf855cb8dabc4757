// A stand-in avatar: the identity's portrait, its brightness breathing slowly so every frame
// differs (encoders and viewers see a live stream, not a frozen one). It publishes exactly
// what the talking-head renderer will: one camera track named `avatar` at 25 fps.
import {
  LocalVideoTrack,
  TrackPublishOptions,
  TrackSource,
  VideoBufferType,
  VideoFrame,
  VideoSource,
  type LocalTrackPublication,
  type Room,
} from '@livekit/rtc-node';
import { AVATAR_FPS, AVATAR_TRACK_NAME, type AvatarRenderer, type AvatarRendererOptions } from '../renderer.ts';
import { fetchPortrait, plainPicture, type I420Picture } from './portrait.ts';

const FRAME_MS = 1000 / AVATAR_FPS;
/** One slow breath: brightness goes 100 % → 80 % → 100 % over this period. */
const BREATH_MS = 4_000;
const MAX_BITRATE_BPS = 1_500_000n;

export class StandinRenderer implements AvatarRenderer {
  readonly #options: AvatarRendererOptions;
  readonly #logger: { warn(message: string): void };
  #stopped = false;
  #room: Room | undefined;
  #source: VideoSource | undefined;
  #publication: LocalTrackPublication | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** performance.now() of frame 0; frame k is due at #startedAt + k·FRAME_MS. */
  #startedAt = 0;
  #frameIndex = 0;
  #firstFrameSent = false;

  constructor(options: AvatarRendererOptions) {
    this.#options = options;
    this.#logger = options.logger ?? console;
  }

  async start(room: Room): Promise<void> {
    const picture = await this.#loadPicture();
    if (this.#stopped) return;
    const { width, height } = this.#options.size;
    const source = new VideoSource(width, height);
    this.#source = source;
    this.#room = room;
    const track = LocalVideoTrack.createVideoTrack(AVATAR_TRACK_NAME, source);
    this.#publication = await room.localParticipant!.publishTrack(
      track,
      new TrackPublishOptions({
        source: TrackSource.SOURCE_CAMERA,
        // One visitor watches each session: a single layer, no simulcast encodes to pay for.
        simulcast: false,
        videoEncoding: { maxBitrate: MAX_BITRATE_BPS, maxFramerate: AVATAR_FPS },
      }),
    );
    if (this.#stopped) return;
    this.#startFrames(picture);
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#timer);
    const publication = this.#publication;
    if (publication?.sid && this.#room?.isConnected) {
      await this.#room.localParticipant!.unpublishTrack(publication.sid).catch(() => undefined);
    }
    await this.#source?.close();
  }

  async #loadPicture(): Promise<I420Picture> {
    const { identity, size } = this.#options;
    if (!identity) return plainPicture(size);
    try {
      return await fetchPortrait(identity.image_url, size);
    } catch (error) {
      // The session goes on (and is billed) with a plain picture rather than no video at all.
      this.#logger.warn(`the portrait of ${identity.identity_id} could not be loaded, streaming a plain picture: ${String(error)}`);
      return plainPicture(size);
    }
  }

  #startFrames(picture: I420Picture): void {
    const { width, height } = picture.size;
    const lumaBytes = width * height;
    const pixels = new Uint8Array(picture.data); // chroma stays as copied; luma is rewritten per frame
    const frame = new VideoFrame(pixels, width, height, VideoBufferType.I420);
    const scaled = new Uint8Array(256);

    const render = () => {
      if (this.#stopped) return;
      const now = performance.now();
      const elapsed = now - this.#startedAt;
      const brightness = 0.9 + 0.1 * Math.cos((2 * Math.PI * elapsed) / BREATH_MS);
      for (let value = 0; value < 256; value++) scaled[value] = Math.round(value * brightness);
      const base = picture.data;
      for (let i = 0; i < lumaBytes; i++) pixels[i] = scaled[base[i]!]!;
      try {
        // The source copies the pixels before returning, so the buffer is reused for the next frame.
        this.#source!.captureFrame(frame, BigInt(Math.round(elapsed * 1000)));
      } catch (error) {
        if (!this.#stopped) this.#logger.warn(`the avatar stopped streaming: ${String(error)}`);
        return;
      }
      if (!this.#firstFrameSent) {
        this.#firstFrameSent = true;
        this.#options.onFirstFrame(now);
      }
      this.#frameIndex++;
      this.#scheduleFrame(render);
    };

    this.#startedAt = performance.now();
    this.#frameIndex = 0;
    render();
  }

  /** Frames are due on a grid from the start, so timer lateness never accumulates; a stall skips frames rather than bursting them. */
  #scheduleFrame(render: () => void): void {
    const now = performance.now();
    let due = this.#startedAt + this.#frameIndex * FRAME_MS;
    if (now - due > FRAME_MS) {
      this.#frameIndex = Math.ceil((now - this.#startedAt) / FRAME_MS);
      due = this.#startedAt + this.#frameIndex * FRAME_MS;
    }
    this.#timer = setTimeout(render, Math.max(0, due - now));
  }
}
