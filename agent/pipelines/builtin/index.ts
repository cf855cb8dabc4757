// The built-in talking head: the identity's own photo (its framing for this shape), brought
// to life on the CPU by warping it: lips from the voice, blinks, the eyes' glances and
// saccades, idle head motion and breathing, an attentive tilt while listening. Training (src/pipelines/builtin, the other
// half of this pipeline) measured the face once into a rig (src/contract/face-rig.ts); a
// session only fetches the framing, its rig and textures.
import { VideoBufferType, VideoFrame } from '@livekit/rtc-node';
import sharp from 'sharp';
import {
  builtinAssetNames,
  FACE_RIG_VERSION,
  type FaceRig,
  type FrameSize,
  type RgbaImage,
} from '../../../src/contract/index.ts';
import type { AvatarRenderer, AvatarRendererOptions, FrameInput } from '../types.ts';
import { Blinks } from './blinks.ts';
import { Gaze } from './gaze.ts';
import { HeadMotion } from './head-motion.ts';
import { LipSync } from './lips.ts';
import { type FacePose, NEUTRAL_POSE } from './pose.ts';
import { FaceWarp, i420Length } from './warp.ts';

export interface TalkingHeadOptions extends AvatarRendererOptions {
  /** Chance for blinks and the sway's phases; tests pass a seeded one. */
  random?: () => number;
  /** Idle head motion, breathing and the eyes' glances; tests switch it off to look at lips and lids alone. */
  headMotion?: boolean;
}

/** The framing is the photo at the frame size: anything far larger is not ours. */
const MAX_ASSET_BYTES = 20 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;

export class TalkingHeadRenderer implements AvatarRenderer {
  readonly size: FrameSize;
  readonly #options: TalkingHeadOptions;
  readonly #random: () => number;
  #pixels: Uint8Array | undefined;
  #frame: VideoFrame | undefined;
  #warp: FaceWarp | undefined;
  #lips = new LipSync();
  #blinks: Blinks | undefined;
  #gaze: Gaze | undefined;
  #motion: HeadMotion | undefined;
  readonly #pose: FacePose = { ...NEUTRAL_POSE };

  constructor(options: TalkingHeadOptions) {
    this.#options = options;
    this.size = options.size;
    this.#random = options.random ?? Math.random;
  }

  async prepare(): Promise<void> {
    const { width, height } = this.size;
    this.#pixels = new Uint8Array(i420Length(width, height));
    this.#frame = new VideoFrame(this.#pixels, width, height, VideoBufferType.I420);
    try {
      const { warp, rig } = await this.#loadFace();
      warp.paintBase(this.#pixels);
      // One throwaway frame: the warp's first, unoptimised run (about 50 ms) happens here,
      // while the job still connects, instead of holding back the visitor's first frame.
      warp.render(this.#pose, this.#pixels);
      this.#warp = warp;
      this.#blinks = new Blinks(this.#random);
      this.#gaze = new Gaze(this.#random);
      this.#motion = new HeadMotion(rig.head.faceHeight, this.#random);
    } catch (error) {
      // The session goes on (and is billed) with a plain picture rather than no video at all.
      this.#options.logger.warn(
        { identity_id: this.#options.identity?.identity_id, err: error },
        'the face could not be loaded; streaming a plain picture',
      );
      paintPlain(this.#pixels, width, height);
    }
  }

  nextFrame(input: FrameInput): VideoFrame {
    const frame = this.#frame;
    if (!frame || !this.#pixels) throw new Error('prepare() must finish before the first frame');
    const warp = this.#warp;
    if (!warp) return frame;
    const mouth = this.#lips.next(input.audio, input.speechSamples, input.visemes);
    const blink = this.#blinks!.closure(input.elapsedMs);
    const pose = this.#pose;
    pose.open = mouth.open;
    pose.round = mouth.round;
    pose.press = mouth.press;
    pose.blink = blink;
    if (this.#options.headMotion !== false) {
      pose.gaze = this.#gaze!.next(input.elapsedMs, input.speechSamples > 0);
      const head = this.#motion!.next(input.elapsedMs, {
        speaking: input.speechSamples > 0,
        loudness: mouth.open,
        stressed: input.stressed,
        visitorSpeaking: input.visitorSpeaking,
      });
      pose.dx = head.dx;
      pose.dy = head.dy;
      pose.roll = head.roll;
      pose.brow = head.brow;
    }
    warp.render(pose, this.#pixels);
    return frame;
  }

  async #loadFace(): Promise<{ warp: FaceWarp; rig: FaceRig }> {
    const identity = this.#options.identity;
    if (!identity) throw new Error('the session has no identity');
    const assets = identity.assets ?? {};
    const names = builtinAssetNames(this.size.width > this.size.height ? 'landscape' : 'portrait');
    const imageUrl = assets[names.image];
    const rigUrl = assets[names.rig];
    if (!imageUrl || !rigUrl) throw new Error(`the identity has no ${names.image} and ${names.rig}`);
    const mouthUrl = assets[names.mouth];
    const [imageBytes, rigBytes, mouthBytes] = await Promise.all([
      fetchAsset(imageUrl),
      fetchAsset(rigUrl),
      mouthUrl ? fetchAsset(mouthUrl) : undefined,
    ]);
    const rig = parseRig(rigBytes, this.size);
    const [image, mouth] = await Promise.all([decodePng(imageBytes), mouthBytes ? decodePng(mouthBytes) : undefined]);
    if (image.width !== this.size.width || image.height !== this.size.height) {
      throw new Error(`the framing is ${image.width}×${image.height}, not ${this.size.width}×${this.size.height}`);
    }
    const base = new VideoFrame(image.rgba, image.width, image.height, VideoBufferType.RGBA).convert(
      VideoBufferType.I420,
    ).data;
    return { warp: new FaceWarp(rig, new Uint8Array(base), mouth), rig };
  }
}

async function fetchAsset(url: string): Promise<Uint8Array> {
  const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes.byteLength > MAX_ASSET_BYTES)
    throw new Error(`${url} is ${bytes.byteLength} bytes, more than ${MAX_ASSET_BYTES}`);
  return bytes;
}

async function decodePng(bytes: Uint8Array): Promise<RgbaImage> {
  const { data, info } = await sharp(bytes, { limitInputPixels: 16_000_000 })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    rgba: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  };
}

function parseRig(bytes: Uint8Array, size: FrameSize): FaceRig {
  const rig = JSON.parse(new TextDecoder().decode(bytes)) as FaceRig;
  if (rig?.version !== FACE_RIG_VERSION) throw new Error(`unknown face rig version ${String(rig?.version)}`);
  if (rig.width !== size.width || rig.height !== size.height)
    throw new Error(`the face rig is for ${rig.width}×${rig.height}, not ${size.width}×${size.height}`);
  return rig;
}

/** A flat dark grey, for sessions without a face to show. */
function paintPlain(pixels: Uint8Array, width: number, height: number): void {
  pixels.fill(72, 0, width * height);
  pixels.fill(128, width * height);
}
