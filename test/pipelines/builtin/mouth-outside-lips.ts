// What "nothing dark outside the lips" measures on a rendered frame: the landmark model's
// lips on the OUTPUT frame, and every pixel around them (outside the outer lip line) compared
// with the neutral frame. Over a dark opening the model at times draws the upper lip's line
// through the gap or along the teeth (seen on three strangers), so the lips are where either
// reading puts them: the output frame's, or the neutral frame's; what the issue saw (dark
// under the lower lip, past the corners) is outside both. The jaw and lips move skin, so a pixel matches when some neutral
// pixel a little to the side or up the face (as far as the jaw drops) has its luma: skin the
// jaw carried down matches; the mouth's inside drawn past the lips matches nothing.
import type { Point } from '../../../src/contract/face-rig.ts';
import { detectFaces } from '../../../src/pipelines/builtin/face-detection.ts';
import type { RgbFrame } from './stranger-face.ts';

export const LIPS_OUTER = [61, 185, 40, 39, 37, 0, 267, 269, 270, 409, 291, 375, 321, 405, 314, 17, 84, 181, 91, 146];
export const LIPS_INNER = [78, 191, 80, 81, 82, 13, 312, 311, 310, 415, 308, 324, 318, 402, 317, 14, 87, 178, 88, 95];

/** Luma levels (of 255) a pixel may differ from every neutral pixel it could have come from. */
export const TOLERANCE = 28;
/** Landmarks sit on the lip line to a pixel or so: this close to it counts as the lip. */
const LIP_MARGIN = 1.5;

export interface Outside {
  /** Pixels outside the lips matching no neutral pixel they could have come from. */
  stray: number;
  /** Of those, darker than every such neutral pixel (the "dark arc"). */
  dark: number;
  /** The largest mismatch, in luma levels. */
  worst: number;
  /** Where the stray pixels are, for a picture of them. */
  where: Point[];
}

/**
 * The landmark model's points on a rendered frame. A portrait framing is mostly face, and the
 * model (trained on faces with surroundings) misses some, a face in profile above all: then
 * the frame is tried again in the middle of a larger grey canvas, as the photo had it.
 */
export async function landmarksOf(frame: RgbFrame): Promise<Point[]> {
  for (const grow of [1, 1.5, 2, 2.5, 3]) {
    const width = Math.round(frame.width * grow);
    const height = Math.round(frame.height * grow);
    const left = Math.floor((width - frame.width) / 2);
    const top = Math.floor((height - frame.height) / 2);
    const rgb = new Uint8Array(width * height * 3).fill(128);
    for (let y = 0; y < frame.height; y++) {
      for (let x = 0; x < frame.width; x++) {
        const i = ((y + top) * width + x + left) * 3;
        const j = (y * frame.width + x) * 4;
        rgb[i] = frame.rgba[j]!;
        rgb[i + 1] = frame.rgba[j + 1]!;
        rgb[i + 2] = frame.rgba[j + 2]!;
      }
    }
    const faces = await detectFaces(rgb, width, height);
    if (!faces.length) continue;
    const largest = faces.reduce((a, b) => (b.box[2] * b.box[3] > a.box[2] * a.box[3] ? b : a));
    return largest.landmarks.map(([x, y]): Point => [x - left, y - top]);
  }
  throw new Error('no face found on the rendered frame');
}

function lumaPlane(frame: RgbFrame): Float32Array {
  const plane = new Float32Array(frame.width * frame.height);
  for (let i = 0; i < plane.length; i++)
    plane[i] = 0.299 * frame.rgba[4 * i]! + 0.587 * frame.rgba[4 * i + 1]! + 0.114 * frame.rgba[4 * i + 2]!;
  return plane;
}

/** Signed distance to a closed polygon: negative inside. */
function polygonDistance(polygon: Point[], x: number, y: number): number {
  let inside = false;
  let nearest = Infinity;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [xi, yi] = polygon[i]!;
    const [xj, yj] = polygon[j]!;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
    const dx = xj - xi;
    const dy = yj - yi;
    const t = Math.max(0, Math.min(1, ((x - xi) * dx + (y - yi) * dy) / (dx * dx + dy * dy || 1)));
    nearest = Math.min(nearest, Math.hypot(x - xi - t * dx, y - yi - t * dy));
  }
  return inside ? -nearest : nearest;
}

/**
 * Compares `spoken` with `neutral` around the mouth, outside the lips the landmark model finds
 * on `spoken` and on `neutral`. `neutralLandmarks` are the model's on the neutral frame (its mouth's inside is
 * no source: teeth and shadow showing in a smile match nothing outside the lips).
 */
export function outsideLips(
  neutral: RgbFrame,
  neutralLandmarks: Point[],
  spoken: RgbFrame,
  spokenLandmarks: Point[],
): Outside {
  const { width, height } = neutral;
  const before = lumaPlane(neutral);
  const after = lumaPlane(spoken);
  const at = (landmarks: Point[], index: number) => landmarks[index]!;
  const left = at(neutralLandmarks, 61);
  const right = at(neutralLandmarks, 291);
  const mouthWidth = Math.hypot(right[0] - left[0], right[1] - left[1]);
  // The face's own axes: across the mouth, and down it (the jaw's direction on a tilted head).
  const ax = (right[0] - left[0]) / mouthWidth;
  const ay = (right[1] - left[1]) / mouthWidth;
  const [downX, downY] = [-ay, ax];
  const outer = LIPS_OUTER.map((i) => at(spokenLandmarks, i));
  const neutralOuter = LIPS_OUTER.map((i) => at(neutralLandmarks, i));
  const neutralInner = LIPS_INNER.map((i) => at(neutralLandmarks, i));
  const centre: Point = [(left[0] + right[0]) / 2, (left[1] + right[1]) / 2];
  // Sources: up to the widest opening (0.22 × the width, and the upper lip's lift) up the face, a
  // little down and sideways (spread and rounded lips move the corners).
  const up = Math.ceil(0.35 * mouthWidth) + 3;
  const side = Math.ceil(0.12 * mouthWidth) + 2;
  const source = new Uint8Array(width * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      source[y * width + x] =
        Math.hypot(x - centre[0], y - centre[1]) < 1.6 * mouthWidth && polygonDistance(neutralInner, x, y) > -0.5
          ? 1
          : 0;
  const result: Outside = { stray: 0, dark: 0, worst: 0, where: [] };
  // Around the mouth: 0.75 × its width to either side, from the nose down past the dropped chin.
  for (let v = -0.45 * mouthWidth; v <= 0.8 * mouthWidth; v += 1) {
    for (let u = -1.05 * mouthWidth; u <= 1.05 * mouthWidth; u += 1) {
      const x = Math.round(centre[0] + u * ax + v * downX);
      const y = Math.round(centre[1] + u * ay + v * downY);
      if (x < 0 || y < 0 || x >= width || y >= height) continue;
      if (polygonDistance(outer, x, y) < LIP_MARGIN) continue;
      if (polygonDistance(neutralOuter, x, y) < LIP_MARGIN) continue;
      const value = after[y * width + x]!;
      let best = Infinity;
      let darkest = Infinity;
      for (let dv = -3; dv <= up && best > TOLERANCE; dv++) {
        for (let du = -side; du <= side; du++) {
          const sx = Math.round(x + du * ax - dv * downX);
          const sy = Math.round(y + du * ay - dv * downY);
          if (sx < 0 || sy < 0 || sx >= width || sy >= height || !source[sy * width + sx]) continue;
          const reference = before[sy * width + sx]!;
          best = Math.min(best, Math.abs(value - reference));
          darkest = Math.min(darkest, reference);
        }
      }
      if (best > TOLERANCE && best !== Infinity) {
        result.stray++;
        if (value < darkest) result.dark++;
        result.worst = Math.max(result.worst, best);
        result.where.push([x, y]);
      }
    }
  }
  return result;
}
