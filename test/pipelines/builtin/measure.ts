// What the renderer tests measure on frames: regions of the face from its landmarks, and
// how a region's luma differs between two frames.

import type { Point } from '../../../src/contract/face-rig.ts';
import type { FaceRigInput } from '../../../src/pipelines/builtin/face-rig.ts';

export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

const LIPS_OUTER = [61, 185, 40, 39, 37, 0, 267, 269, 270, 409, 291, 146, 91, 181, 84, 17, 314, 405, 321, 375];
const EYES = [
  [33, 246, 161, 160, 159, 158, 157, 173, 133, 7, 163, 144, 145, 153, 154, 155],
  [362, 398, 384, 385, 386, 387, 388, 466, 263, 382, 381, 380, 374, 373, 390, 249],
];

function boxAround(framing: FaceRigInput, indices: number[], grow: { x: number; top: number; bottom: number }): Box {
  const xs = indices.map((i) => framing.landmarks[i]![0]);
  const ys = indices.map((i) => framing.landmarks[i]![1]);
  return {
    x0: Math.max(0, Math.floor(Math.min(...xs) - grow.x)),
    x1: Math.min(framing.width, Math.ceil(Math.max(...xs) + grow.x)),
    y0: Math.max(0, Math.floor(Math.min(...ys) - grow.top)),
    y1: Math.min(framing.height, Math.ceil(Math.max(...ys) + grow.bottom)),
  };
}

/** The lips, and below them as far as the lower lip drops when the mouth opens wide. */
export function mouthBox(framing: FaceRigInput): Box {
  const width = framing.landmarks[291]![0] - framing.landmarks[61]![0];
  return boxAround(framing, LIPS_OUTER, { x: 3, top: 3, bottom: 0.3 * width });
}

/** Each eye, lids included. */
export function eyeBoxes(framing: FaceRigInput): Box[] {
  return EYES.map((eye) => boxAround(framing, eye, { x: 2, top: 2, bottom: 2 }));
}

/** A copy of a frame's luma plane. */
export function luma(frame: { data: Uint8Array; width: number; height: number }): Uint8Array {
  return frame.data.slice(0, frame.width * frame.height);
}

/** Mean absolute luma difference over a box. */
export function meanDifference(a: Uint8Array, b: Uint8Array, width: number, box: Box): number {
  let sum = 0;
  for (let y = box.y0; y < box.y1; y++) {
    for (let x = box.x0; x < box.x1; x++) sum += Math.abs(a[y * width + x]! - b[y * width + x]!);
  }
  return sum / ((box.x1 - box.x0) * (box.y1 - box.y0));
}

/** Largest absolute luma difference over a box. */
export function maxDifference(a: Uint8Array, b: Uint8Array, width: number, box: Box): number {
  let max = 0;
  for (let y = box.y0; y < box.y1; y++) {
    for (let x = box.x0; x < box.x1; x++) max = Math.max(max, Math.abs(a[y * width + x]! - b[y * width + x]!));
  }
  return max;
}

/** Pixels darker than `threshold` in a box (the iris and pupil, in an eye's box). */
export function darkPixels(plane: Uint8Array, width: number, box: Box, threshold: number): number {
  let count = 0;
  for (let y = box.y0; y < box.y1; y++) {
    for (let x = box.x0; x < box.x1; x++) if (plane[y * width + x]! < threshold) count++;
  }
  return count;
}

export function pearson(a: number[], b: number[]): number {
  const n = Math.min(a.length, b.length);
  const meanA = a.slice(0, n).reduce((s, v) => s + v, 0) / n;
  const meanB = b.slice(0, n).reduce((s, v) => s + v, 0) / n;
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < n; i++) {
    ab += (a[i]! - meanA) * (b[i]! - meanB);
    aa += (a[i]! - meanA) ** 2;
    bb += (b[i]! - meanB) ** 2;
  }
  return ab / Math.sqrt(aa * bb);
}

/** How much a and b move together once what `control` explains of each is taken out. */
export function partialCorrelation(a: number[], b: number[], control: number[]): number {
  const ab = pearson(a, b);
  const ac = pearson(a, control);
  const bc = pearson(b, control);
  return (ab - ac * bc) / Math.sqrt((1 - ac * ac) * (1 - bc * bc));
}

/** RMS of 16-bit samples, full scale 1. */
export function rms(samples: Int16Array, count = samples.length): number {
  let sum = 0;
  for (let i = 0; i < count; i++) sum += samples[i]! * samples[i]!;
  return count > 0 ? Math.sqrt(sum / count) / 32768 : 0;
}

/**
 * Where the photo lies in a framing, found from the face alone (not from the framing's code):
 * the similarity that carries the photo's landmarks onto the framing's, fitted by least
 * squares. Returns, per frame point, how far (frame pixels) it lies beyond the photo's edge;
 * negative on the photo.
 */
export function beyondPhoto(
  photo: { width: number; height: number; landmarks: Point[] },
  framed: { landmarks: Point[] },
): (x: number, y: number) => number {
  const n = Math.min(photo.landmarks.length, framed.landmarks.length);
  const mean = (points: Point[]) => points.slice(0, n).reduce(([sx, sy], [x, y]) => [sx + x / n, sy + y / n], [0, 0]);
  const [px, py] = mean(photo.landmarks);
  const [qx, qy] = mean(framed.landmarks);
  let dot = 0;
  let cross = 0;
  let norm = 0;
  for (let i = 0; i < n; i++) {
    const [ax, ay] = [photo.landmarks[i]![0] - px, photo.landmarks[i]![1] - py];
    const [bx, by] = [framed.landmarks[i]![0] - qx, framed.landmarks[i]![1] - qy];
    dot += ax * bx + ay * by;
    cross += ax * by - ay * bx;
    norm += ax * ax + ay * ay;
  }
  // frame = s·R·(p − mean_p) + mean_q, with s·R = [a −b; b a].
  const a = dot / norm;
  const b = cross / norm;
  const scale = Math.hypot(a, b);
  return (x, y) => {
    const dx = x - qx;
    const dy = y - qy;
    const u = (a * dx + b * dy) / (scale * scale) + px;
    const v = (-b * dx + a * dy) / (scale * scale) + py;
    const du = Math.max(-u, u - photo.width);
    const dv = Math.max(-v, v - photo.height);
    return scale * (du > 0 && dv > 0 ? Math.hypot(du, dv) : Math.max(du, dv));
  };
}
