// A stand-in avatar: the identity's portrait, its brightness breathing slowly so every frame
// differs (encoders and viewers see a live stream, not a frozen one), a little brighter
// while it speaks. The talking-head renderer replaces it behind the same interface.
import { VideoBufferType, VideoFrame } from '@livekit/rtc-node';
import type { FrameSize } from '../../../src/contract/index.ts';
import type { AvatarRenderer, AvatarRendererOptions, FrameInput } from '../types.ts';
import { fetchPortrait, type I420Picture, plainPicture } from './portrait.ts';

/** One slow breath: brightness goes 100 % → 80 % → 100 % over this period. */
const BREATH_MS = 4_000;

export class StandinRenderer implements AvatarRenderer {
  readonly size: FrameSize;
  readonly #options: AvatarRendererOptions;
  #picture: I420Picture | undefined;
  #pixels: Uint8Array | undefined;
  #frame: VideoFrame | undefined;
  readonly #scaled = new Uint8Array(256);

  constructor(options: AvatarRendererOptions) {
    this.#options = options;
    this.size = options.size;
  }

  async prepare(): Promise<void> {
    const picture = await this.#loadPicture();
    this.#picture = picture;
    // Chroma stays as copied; luma is rewritten per frame.
    this.#pixels = new Uint8Array(picture.data);
    this.#frame = new VideoFrame(this.#pixels, picture.size.width, picture.size.height, VideoBufferType.I420);
  }

  nextFrame(input: FrameInput): VideoFrame {
    const picture = this.#picture;
    const pixels = this.#pixels;
    if (!picture || !pixels || !this.#frame) throw new Error('prepare() must finish before the first frame');
    const breathing = 0.9 + 0.1 * Math.cos((2 * Math.PI * input.elapsedMs) / BREATH_MS);
    const brightness = Math.min(1.1, breathing + (input.speechSamples > 0 ? 0.1 * loudness(input.audio) : 0));
    for (let value = 0; value < 256; value++) this.#scaled[value] = Math.min(255, Math.round(value * brightness));
    const base = picture.data;
    const lumaBytes = picture.size.width * picture.size.height;
    for (let i = 0; i < lumaBytes; i++) pixels[i] = this.#scaled[base[i]!]!;
    return this.#frame;
  }

  async #loadPicture(): Promise<I420Picture> {
    const { identity, size } = this.#options;
    if (!identity) return plainPicture(size);
    try {
      return await fetchPortrait(identity.image_url, size);
    } catch (error) {
      // The session goes on (and is billed) with a plain picture rather than no video at all.
      this.#options.logger.warn(
        { identity_id: identity.identity_id, err: error },
        'the portrait could not be loaded; streaming a plain picture',
      );
      return plainPicture(size);
    }
  }
}

/** 0..1, from the slice's RMS (full scale ≈ 1). */
function loudness(audio: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < audio.length; i++) sum += audio[i]! * audio[i]!;
  return Math.min(1, (Math.sqrt(sum / Math.max(1, audio.length)) / 32768) * 4);
}
