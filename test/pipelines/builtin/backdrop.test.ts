// The backdrop beyond the photo (src/pipelines/builtin/backdrop.ts): where the photo does not
// reach the frame's edge (the square astronaut in the landscape frame, a tight 3:4 crop in
// either), training lays the photo on a blurred, darkened copy of itself rather than
// continuing its edge pixels into stretched streaks; a session draws it as still background.
import { describe, expect, test } from 'bun:test';
import { defaultUploadBounds, type InspectedImage, inspectImage } from '../../../src/media/index.ts';
import { type FoundFace, findFace } from '../../../src/pipelines/builtin/face-detection.ts';
import { type Framing, frameFace } from '../../../src/pipelines/builtin/framing.ts';
import { speechLikeSamples } from '../../fixtures/index.ts';
import { type Photo, photoBytes } from './face.ts';
import { beyondPhoto, luma } from './measure.ts';
import { serveFace, talkingHead } from './served-face.ts';

const SLICE = 1920; // 40 ms at 48 kHz

const analysed = new Map<Photo, Promise<{ image: InspectedImage; face: FoundFace }>>();
function analyse(photo: Photo) {
  let pending = analysed.get(photo);
  if (!pending) {
    pending = (async () => {
      const image = await inspectImage(await photoBytes(photo), defaultUploadBounds);
      return { image, face: await findFace(image) };
    })();
    analysed.set(photo, pending);
  }
  return pending;
}

/** Per frame pixel (its centre), how far it lies beyond the photo: found from the face, not from the framing's code. */
async function distances(
  photo: Photo,
  framed: { width: number; height: number; landmarks: [number, number][] },
): Promise<Float32Array> {
  const { image, face } = await analyse(photo);
  const beyond = beyondPhoto({ width: image.width, height: image.height, landmarks: face.landmarks }, framed);
  const out = new Float32Array(framed.width * framed.height);
  for (let y = 0; y < framed.height; y++)
    for (let x = 0; x < framed.width; x++) out[y * framed.width + x] = beyond(x + 0.5, y + 0.5);
  return out;
}

const lumaOf = (rgb: Uint8Array, i: number) => 0.299 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!;
/** Colour without brightness (red and blue shares, ×255): a darkening backdrop keeps it, a streak of the flag does not. */
const chromaDifference = (rgb: Uint8Array, i: number, j: number) => {
  const share = (k: number, c: number) =>
    (255 * rgb[k * 3 + c]!) / (rgb[k * 3]! + rgb[k * 3 + 1]! + rgb[k * 3 + 2]! + 30);
  return Math.abs(share(i, 0) - share(j, 0)) + Math.abs(share(i, 2) - share(j, 2));
};

/**
 * Streaks: colour that runs on unchanged away from the photo while it changes along the
 * photo's edge. Over the backdrop, how much the colour changes 16 px along the edge against
 * 16 px away from it (the direction in which the distance to the photo grows).
 */
function streakiness(framing: Framing, distance: Float32Array): number {
  const { width, height, rgb } = framing;
  const inBackdrop = (x: number, y: number) =>
    x >= 0 && y >= 0 && x < width && y < height && distance[y * width + x]! > 4;
  let along = 0;
  let away = 0;
  for (let y = 1; y < height - 1; y += 3) {
    for (let x = 1; x < width - 1; x += 3) {
      const i = y * width + x;
      if (!(distance[i]! > 4)) continue;
      const gx = distance[i + 1]! - distance[i - 1]!;
      const gy = distance[i + width]! - distance[i - width]!;
      const norm = Math.hypot(gx, gy);
      const [ax, ay] = [Math.round(x + (16 * gx) / norm), Math.round(y + (16 * gy) / norm)];
      const [bx, by] = [Math.round(x - (16 * gy) / norm), Math.round(y + (16 * gx) / norm)];
      if (!inBackdrop(ax, ay) || !inBackdrop(bx, by)) continue;
      away += chromaDifference(rgb, i, ay * width + ax);
      along += chromaDifference(rgb, i, by * width + bx);
    }
  }
  return along / away;
}

describe('beyond the photo', () => {
  test.each([
    ['astronaut', 'landscape'],
    ['headshot', 'landscape'],
    ['headshot', 'portrait'],
  ] as const)(
    '%s, %s: a blurred, darkened copy of the photo, no bars, no streaks, no hard edges',
    async (photo, shape) => {
      const { image, face } = await analyse(photo);
      const framing = await frameFace(image, face, shape);
      const distance = await distances(photo, framing);
      expect(framing.extended).toBe(true);
      const { width, rgb } = framing;
      let backdrop = 0;
      let backdropCount = 0;
      let edge = 0;
      let edgeCount = 0;
      let hardest = 0;
      for (let i = 0; i < distance.length; i++) {
        const d = distance[i]!;
        if (d > 4) {
          backdrop += lumaOf(rgb, i);
          backdropCount++;
          // Steps over 2 px, both ends on the backdrop (the shadow along the photo's edge is soft too).
          const beside = (i % width) + 2 < width ? [i + 2] : [];
          for (const j of [...beside, i + 2 * width])
            if (distance[j]! > 4) hardest = Math.max(hardest, Math.abs(lumaOf(rgb, j) - lumaOf(rgb, i)));
        } else if (d < -24 && d > -56) {
          edge += lumaOf(rgb, i);
          edgeCount++;
        }
      }
      expect(backdropCount).toBeGreaterThan(0.05 * distance.length);
      // Darker than the photo along its edge, as a backdrop is, but no black bars.
      expect(backdrop / backdropCount).toBeLessThan(0.85 * (edge / edgeCount));
      expect(backdrop / backdropCount).toBeGreaterThan(0.3 * (edge / edgeCount));
      // Stretched edge pixels change colour along the edge and not away from it (5.5, 3.1 and 2.0
      // here before); a blurred photo changes about alike both ways (1.0, 0.7, 0.5).
      expect(streakiness(framing, distance)).toBeLessThan(1.5);
      expect(hardest).toBeLessThan(10);
    },
  );

  test('a photo that nearly fills the frame fades into the backdrop; the backdrop continues what lies at its edge', async () => {
    // The astronaut in the portrait frame: the photo stops short of the top by a band of plain wall.
    const { image, face } = await analyse('astronaut');
    const framing = await frameFace(image, face, 'portrait');
    const distance = await distances('astronaut', framing);
    const { width, rgb } = framing;
    // Down each column, from the photo's last rows into the band above it: no step, no dark bar.
    let worst = 0;
    for (let x = 20; x < width - 20; x += 10) {
      const column: number[] = [];
      for (let y = 0; y < 200; y++) if (distance[y * width + x]! > -40) column.push(lumaOf(rgb, y * width + x));
      for (let k = 4; k < column.length; k++) worst = Math.max(worst, Math.abs(column[k]! - column[k - 4]!));
      expect(Math.min(...column)).toBeGreaterThan(0.7 * Math.max(...column));
    }
    expect(worst).toBeLessThan(12);
  });
});

describe('in a session', () => {
  test.each([
    ['astronaut', 0, 0],
    // A tight crop: the head reaches the photo's edge and moves it a little; the backdrop farther out stays.
    ['headshot', 32, 3],
  ] as const)(
    '%s, landscape: the backdrop is still background (beyond %i px from the photo, changes ≤ %i)',
    async (photo, from, most) => {
      const face = await serveFace(photo);
      try {
        const renderer = talkingHead(face, 'landscape');
        await renderer.prepare();
        const { width, height } = renderer.size;
        const distance = await distances(photo, face.framings.landscape);
        const voice = speechLikeSamples(10, 48_000);
        const first = luma(renderer.nextFrame({ audio: new Int16Array(SLICE), speechSamples: 0, elapsedMs: 0 }));
        let changed = 0;
        let moved = 0;
        for (let frame = 1; frame < 250; frame++) {
          // Speaking and listening by turns, with accents: the head sways, nods and tilts.
          const speaking = frame % 100 < 60;
          const audio = speaking ? voice.subarray(frame * SLICE, (frame + 1) * SLICE) : new Int16Array(SLICE);
          const drawn = luma(
            renderer.nextFrame({
              audio,
              speechSamples: speaking ? SLICE : 0,
              elapsedMs: frame * 40,
              stressed: speaking && frame % 12 === 0,
            }),
          );
          for (let i = 0; i < width * height; i++) {
            const change = Math.abs(drawn[i]! - first[i]!);
            if (distance[i]! > from) changed = Math.max(changed, change);
            else moved = Math.max(moved, change);
          }
        }
        expect(moved).toBeGreaterThan(20); // the face did move
        expect(changed).toBeLessThanOrEqual(most);
      } finally {
        await face.stop();
      }
    },
  );
});
