// A stranger's photo (stranger-photos.ts) trained as an upload is (real detection, the
// training's framing and rig) and served as a session fetches it, plus the frames the
// mouth tests look at: the neutral face and the mouth held at a few spoken shapes.
import { VideoBufferType, type VideoFrame } from '@livekit/rtc-node';
import sharp from 'sharp';
import type { Viseme } from '../../../agent/visemes/index.ts';
import type { FaceRig } from '../../../src/contract/face-rig.ts';
import { inspectImage } from '../../../src/media/index.ts';
import { defaultUploadBounds } from '../../../src/media/upload-bounds.ts';
import { findFace } from '../../../src/pipelines/builtin/face-detection.ts';
import { buildFaceRig, type FaceRigInput } from '../../../src/pipelines/builtin/face-rig.ts';
import { frameFace, opaqueRgba } from '../../../src/pipelines/builtin/framing.ts';
import type { ServedFace } from './served-face.ts';
import { serveFiles, talkingHead } from './served-face.ts';
import { type StrangerPhoto, strangerPhoto } from './stranger-photos.ts';

const SLICE = 1920; // 40 ms at 48 kHz

/** The stranger's portrait framing, rig and textures, served over HTTP (portrait only). */
export async function serveStranger(name: StrangerPhoto): Promise<ServedFace> {
  return serveUpload(await strangerPhoto(name));
}

/** Any uploaded photo's portrait framing, rig and textures, trained and served as serveStranger's. */
export async function serveUpload(photo: Uint8Array): Promise<ServedFace> {
  const framing = await portraitFraming(photo);
  const { rig, textures } = buildFaceRig(framing);
  const files = new Map<string, { bytes: Uint8Array<ArrayBuffer>; type: string }>();
  files.set('portrait.image', { bytes: await png(framing), type: 'image/png' });
  files.set('portrait.rig', {
    bytes: new TextEncoder().encode(JSON.stringify(rig)) as Uint8Array<ArrayBuffer>,
    type: 'application/json',
  });
  for (const [texture, pixels] of Object.entries(textures))
    files.set(`portrait.texture.${texture}`, { bytes: await png(pixels), type: 'image/png' });
  const { assets, stop } = serveFiles(files);
  return {
    // Only the portrait is trained here; the landscape entries repeat it for the type's sake.
    framings: { portrait: framing, landscape: framing },
    rigs: { portrait: rig, landscape: rig as FaceRig },
    assets,
    stop,
  };
}

/** A photo framed for the portrait shape as training frames it (real detection), with its landmarks. */
export async function portraitFraming(photo: Uint8Array): Promise<FaceRigInput> {
  const image = await inspectImage(photo, defaultUploadBounds);
  const framed = await frameFace(image, await findFace(image), 'portrait');
  return { width: framed.width, height: framed.height, rgba: opaqueRgba(framed.rgb), landmarks: framed.landmarks };
}

export interface HeldShape {
  label: string;
  viseme: Viseme;
  /** 0–1 of the voice's peak. */
  loudness: number;
}

/** Openings from a whisper to a wide "a", each held a few frames so the lips settle. */
export const HELD_SHAPES: HeldShape[] = [
  { label: 'teeth', viseme: 'teeth', loudness: 0.8 },
  { label: 'spread', viseme: 'spread', loudness: 0.9 },
  { label: 'mid', viseme: 'mid', loudness: 0.7 },
  { label: 'round', viseme: 'round', loudness: 1 },
  { label: 'open half', viseme: 'open', loudness: 0.5 },
  { label: 'open wide', viseme: 'open', loudness: 1 },
];

export interface RgbFrame {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel. */
  rgba: Uint8Array;
}

/** The neutral frame, then one frame per held shape (its last), head motion off. */
export async function heldFrames(
  face: ServedFace,
  shapes: HeldShape[] = HELD_SHAPES,
): Promise<{ neutral: RgbFrame; spoken: Array<HeldShape & { frame: RgbFrame }> }> {
  const renderer = talkingHead(face, 'portrait', { headMotion: false });
  await renderer.prepare();
  const silence = new Int16Array(SLICE);
  let elapsedMs = 0;
  const neutral = rgbaOf(renderer.nextFrame({ audio: silence, speechSamples: 0, elapsedMs }));
  // One loud slice first: the lips' running peak is then the voice's loudest.
  renderer.nextFrame({ audio: tone(1), speechSamples: SLICE, elapsedMs: (elapsedMs += 40) });
  renderer.nextFrame({ audio: silence, speechSamples: 0, elapsedMs: (elapsedMs += 40) });
  const spoken: Array<HeldShape & { frame: RgbFrame }> = [];
  for (const shape of shapes) {
    const said = { audio: tone(shape.loudness), speechSamples: SLICE, visemes: { [shape.viseme]: 1 } };
    let frame = renderer.nextFrame({ ...said, elapsedMs: (elapsedMs += 40) });
    for (let i = 0; i < 5; i++) frame = renderer.nextFrame({ ...said, elapsedMs: (elapsedMs += 40) });
    spoken.push({ ...shape, frame: rgbaOf(frame) });
    // Closed between shapes, as between words.
    renderer.nextFrame({ audio: silence, speechSamples: 0, elapsedMs: (elapsedMs += 40) });
  }
  return { neutral, spoken };
}

/** A vowel-like tone at `level` of 0.3 full scale. */
function tone(level: number): Int16Array {
  const samples = new Int16Array(SLICE);
  for (let i = 0; i < SLICE; i++)
    samples[i] = Math.round(level * 0.3 * 32767 * Math.sin((2 * Math.PI * 220 * i) / 48_000));
  return samples;
}

function rgbaOf(frame: VideoFrame): RgbFrame {
  const rgba = frame.convert(VideoBufferType.RGBA).data;
  return { width: frame.width, height: frame.height, rgba: new Uint8Array(rgba) };
}

async function png(image: { width: number; height: number; rgba: Uint8Array }): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(
    await sharp(image.rgba, { raw: { width: image.width, height: image.height, channels: 4 } })
      .png()
      .toBuffer(),
  );
}
