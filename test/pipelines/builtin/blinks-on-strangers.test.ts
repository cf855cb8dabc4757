// Blinks on photos nobody tuned the renderer for (issue 35.3): tilted 15–30° either way, and dim
// (the astronaut at 45 % light, and the stranger photo `dim`). A closed blink must shut both
// eyes whole, corners included (a sliver of white left at a corner read as a wink). Each photo is trained as training trains it (real detection,
// framing, rig), drawn at open, mid-blink and shut; the eye crops go to /tmp for a look.
// Judged two ways: the face landmark model run on the drawn frame (the eye's opening, lid to
// lid over its width, shrinks) and the pixels of the photo's eye opening (none left as they were).
import { describe, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import { VideoBufferType, VideoFrame } from '@livekit/rtc-node';
import sharp from 'sharp';
import { NEUTRAL_POSE } from '../../../agent/pipelines/builtin/pose.ts';
import { FaceWarp, i420Length } from '../../../agent/pipelines/builtin/warp.ts';
import type { Point } from '../../../src/contract/face-rig.ts';
import { inspectImage } from '../../../src/media/index.ts';
import { defaultUploadBounds } from '../../../src/media/upload-bounds.ts';
import { findFace } from '../../../src/pipelines/builtin/face-detection.ts';
import { buildFaceRig, type FaceRigInput } from '../../../src/pipelines/builtin/face-rig.ts';
import { portraitPng } from '../../fixtures/index.ts';
import { portraitFraming } from './stranger-face.ts';
import { type StrangerPhoto, strangerPhoto } from './stranger-photos.ts';

const OUT = '/tmp/blinks-on-strangers';
/** Per eye: upper lid (corner to corner), lower lid, and the points the opening is measured on (top, bottom, corners). */
const EYES = [
  {
    upper: [33, 246, 161, 160, 159, 158, 157, 173, 133],
    lower: [33, 7, 163, 144, 145, 153, 154, 155, 133],
    opening: [159, 145, 33, 133],
  },
  {
    upper: [362, 398, 384, 385, 386, 387, 388, 466, 263],
    lower: [362, 382, 381, 380, 374, 373, 390, 249, 263],
    opening: [386, 374, 362, 263],
  },
];

/** The repo's portrait turned (degrees, clockwise) or dimmed, kept 512 px square as uploaded. */
async function turned(degrees: number): Promise<Uint8Array> {
  const rotated = await sharp(portraitPng()).rotate(degrees, { background: '#808080' }).png().toBuffer();
  return new Uint8Array(await sharp(rotated).resize(512, 512, { fit: 'cover' }).png().toBuffer());
}

async function dimmed(): Promise<Uint8Array> {
  return new Uint8Array(await sharp(portraitPng()).linear(0.45, 0).png().toBuffer());
}

const PHOTOS: Record<string, () => Promise<Uint8Array>> = {
  'astronaut at 45 % light': dimmed,
  'astronaut turned 20°': () => turned(20),
  'astronaut turned −20°': () => turned(-20),
  'astronaut turned 28°': () => turned(28),
  'astronaut turned −28°': () => turned(-28),
  ...Object.fromEntries(
    (
      ['smiling-tilted-left', 'smiling-tilted-right', 'tilted-far', 'astronaut-small-tilted', 'dim'] as StrangerPhoto[]
    ).map((name) => [name, () => strangerPhoto(name)]),
  ),
};
/** Faces big enough in the frame for the landmark model to read a closed eye (the strangers' are small and blurred). */
const MEASURED_BY_LANDMARKS = new Set(Object.keys(PHOTOS).filter((name) => name.startsWith('astronaut ')));

/** Each eye's opening (lid to lid over corner to corner) as the landmark model sees it in a drawn frame. */
async function openings(frame: Uint8Array, width: number, height: number): Promise<number[]> {
  const rgba = new VideoFrame(frame, width, height, VideoBufferType.I420).convert(VideoBufferType.RGBA).data;
  const png = await sharp(Buffer.from(rgba), { raw: { width, height, channels: 4 } })
    .png()
    .toBuffer();
  const seen = await findFace(await inspectImage(new Uint8Array(png), defaultUploadBounds));
  const at = (i: number) => seen.landmarks[i]!;
  const distance = (a: number, b: number) => Math.hypot(at(a)[0] - at(b)[0], at(a)[1] - at(b)[1]);
  return EYES.map(({ opening: [top, bottom, left, right] }) => distance(top!, bottom!) / distance(left!, right!));
}

/** Share of the photo's eye opening (between its lid landmarks) a frame left as in the open eye (patches, not single pixels). */
function unchangedShare(open: Uint8Array, shut: Uint8Array, width: number, landmarks: Point[], eye: number): number {
  const { upper, lower } = EYES[eye]!;
  const polygon = [...upper, ...[...lower].reverse()].map((i) => landmarks[i]!);
  const xs = polygon.map(([x]) => x);
  const ys = polygon.map(([, y]) => y);
  let inside = 0;
  let unchanged = 0;
  for (let y = Math.floor(Math.min(...ys)); y <= Math.ceil(Math.max(...ys)); y++) {
    for (let x = Math.floor(Math.min(...xs)); x <= Math.ceil(Math.max(...xs)); x++) {
      if (!within(polygon, x, y)) continue;
      inside++;
      // Left as it was: the pixel and its four neighbours. On a blurred grey photo lid skin and
      // eye share a grey along thin lines by chance; an eye left open is a patch.
      const same = (i: number) => Math.abs(open[i]! - shut[i]!) <= 3;
      const i = y * width + x;
      if (same(i) && same(i - 1) && same(i + 1) && same(i - width) && same(i + width)) unchanged++;
    }
  }
  return unchanged / Math.max(1, inside);
}

function within(polygon: Point[], x: number, y: number): boolean {
  let odd = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [xi, yi] = polygon[i]!;
    const [xj, yj] = polygon[j]!;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) odd = !odd;
  }
  return odd;
}

async function saveEyes(name: string, frames: Uint8Array[], framing: FaceRigInput): Promise<void> {
  const { width, height, landmarks } = framing;
  const xs = [33, 133, 362, 263].map((i) => landmarks[i]![0]);
  const ys = [159, 145, 386, 374].map((i) => landmarks[i]![1]);
  const left = Math.max(0, Math.floor(Math.min(...xs) - 25));
  const top = Math.max(0, Math.floor(Math.min(...ys) - 30));
  const crop = {
    left,
    top,
    width: Math.min(width, Math.ceil(Math.max(...xs) + 25)) - left,
    height: Math.min(height, Math.ceil(Math.max(...ys) + 30)) - top,
  };
  const tiles = await Promise.all(
    frames.map(async (frame) => {
      const rgba = new VideoFrame(frame, width, height, VideoBufferType.I420).convert(VideoBufferType.RGBA).data;
      return sharp(Buffer.from(rgba), { raw: { width, height, channels: 4 } })
        .extract(crop)
        .resize({ width: 600, height: 200, fit: 'contain', kernel: 'nearest' })
        .png()
        .toBuffer();
    }),
  );
  mkdirSync(OUT, { recursive: true });
  await sharp({ create: { width: 600, height: 200 * tiles.length, channels: 3, background: '#000' } })
    .composite(tiles.map((input, i) => ({ input, left: 0, top: 200 * i })))
    .png()
    .toFile(`${OUT}/${name.replace(/[^a-z0-9]+/gi, '-')}.png`);
}

describe('blinks on strangers', () => {
  for (const name of Object.keys(PHOTOS)) {
    test(`${name}: a blink shuts both eyes whole, corners included`, async () => {
      const framing = await portraitFraming(await PHOTOS[name]!());
      const { rig, textures } = buildFaceRig(framing);
      const { width, height } = framing;
      const base = new VideoFrame(framing.rgba, width, height, VideoBufferType.RGBA).convert(VideoBufferType.I420).data;
      const warp = new FaceWarp(rig, new Uint8Array(base), textures.mouth);
      const draw = (blink: number) => {
        const out = new Uint8Array(i420Length(width, height));
        warp.paintBase(out);
        warp.render({ ...NEUTRAL_POSE, blink }, out);
        return out;
      };
      const [open, middle, shut] = [draw(0), draw(0.6), draw(1)];
      await saveEyes(name, [open, middle, shut], framing);
      for (const eye of [0, 1]) {
        // Shut, every pixel of the eye's opening is lid; half-way, most are.
        const left = unchangedShare(open, shut, width, framing.landmarks, eye);
        expect({ eye, shut: left <= 0.08 ? 'covered' : `${Math.round(100 * left)} % left` }).toEqual({
          eye,
          shut: 'covered',
        });
        // Half-way, most is lid, and what is still open counts as left (the measure can fail).
        const half = unchangedShare(open, middle, width, framing.landmarks, eye);
        expect(half).toBeLessThan(0.85);
        expect(half).toBeGreaterThan(0.08);
      }
      if (MEASURED_BY_LANDMARKS.has(name)) {
        // The model sees the eye the visitor sees: shut, both openings under half of open.
        const [wide, half, closed] = await Promise.all([open, middle, shut].map((f) => openings(f, width, height)));
        for (const eye of [0, 1]) {
          expect({ eye, closed: closed![eye]! / wide![eye]! }).toEqual({ eye, closed: expect.any(Number) });
          expect(closed![eye]! / wide![eye]!).toBeLessThan(0.5);
          expect(half![eye]! / wide![eye]!).toBeLessThan(0.9);
        }
      }
    }, 60_000);
  }
});
