// The head region of a face's frame, laid out once per session for the warp (warp.ts): a box
// with even origin and size (so chroma lines up), the weight of the head's motion in each of its
// pixels (1 inside the head's ellipse, fading to 0 toward the neck and background), and the
// region cut into runs (row pieces) by what moves their pixels.
import { type FaceRig, smoothstep } from '../../../src/contract/face-rig.ts';
import { boundingBox, type ColumnFrame } from './column-frame.ts';

// What moves a run's pixels: the head rigidly, the head fading out, the mouth, an eye (EYE + n
// for eye n), or where the mouth's and eye n's reach overlap (MOUTH_OR_EYE + n), whichever of
// the two is nearer as the head is drawn.
export const RIGID = 0;
export const FADING = 1;
export const MOUTH = 2;
export const EYE = 3;
export const MOUTH_OR_EYE = 5;

/** Row pieces of one plane: [row, start, end, kind] each, in that plane's pixels. */
export interface Runs {
  list: Int32Array;
  count: number;
}

export interface HeadRegion {
  x0: number;
  y0: number;
  width: number;
  height: number;
  /** The head's motion's weight per pixel of the region, row by row. */
  weight: Float32Array;
  /** The most a roll moves a pixel of the region, per radian: its weighted distance from the pivot. */
  reach: number;
  lumaRuns: Runs;
  chromaRuns: Runs;
}

/**
 * `locals`: the mouth, then the eyes; `margin`: how far the head's motion may bring a pixel
 * into a local region's box (its shift and roll at their bounds).
 */
export function headRegion(rig: FaceRig, locals: readonly ColumnFrame[], margin: number): HeadRegion {
  const { width, height, head } = rig;
  const outer = [head.radii[0] * head.fade, head.radii[1] * head.fade] as const;
  const box = boundingBox(head, -outer[0], outer[0], -outer[1], outer[1], width, height);
  const x0 = box.x0 & ~1;
  const y0 = box.y0 & ~1;
  const w = Math.min(width & ~1, (box.x1 + 1) & ~1) - x0;
  const h = Math.min(height & ~1, (box.y1 + 1) & ~1) - y0;
  const weight = new Float32Array(w * h);
  let reach = 0;
  for (let row = 0; row < h; row++) {
    for (let col = 0; col < w; col++) {
      const x = x0 + col;
      const y = y0 + row;
      const dx = x - head.origin[0];
      const dy = y - head.origin[1];
      const u = (dx * head.axis[0] + dy * head.axis[1]) / head.radii[0];
      const v = (-dx * head.axis[1] + dy * head.axis[0]) / head.radii[1];
      const weightHere = 1 - smoothstep(1, head.fade, Math.sqrt(u * u + v * v));
      weight[row * w + col] = weightHere;
      reach = Math.max(reach, weightHere * Math.hypot(x - head.pivot[0], y - head.pivot[1]));
    }
  }
  const boxes = locals.map((local) => ({
    x0: local.x0 - margin,
    y0: local.y0 - margin,
    x1: local.x1 + margin,
    y1: local.y1 + margin,
  }));
  // Where boxes overlap (the eyes' do, between the eyes, once widened by the margin) a pixel
  // goes to the eye whose box's centre is nearest: the one whose region (its brow's lift
  // included) can reach it. Where the mouth's overlaps an eye's (the nostrils' reach below a
  // low eye: a tilted face's lower one), each frame decides (FaceWarp's #nearer): given to the
  // mouth for good, that eye's lower lid was never closed, a strip of eye left under the blink.
  const kindAt = (x: number, y: number, weightHere: number): number => {
    let best = -1;
    let bestDistance = Infinity;
    let mouth = false;
    for (let index = 0; index < boxes.length; index++) {
      const b = boxes[index]!;
      if (!(x >= b.x0 && x < b.x1 && y >= b.y0 && y < b.y1)) continue;
      if (index === 0) {
        mouth = true;
        continue;
      }
      const distance = Math.hypot(x - (b.x0 + b.x1) / 2, y - (b.y0 + b.y1) / 2);
      if (distance < bestDistance) [best, bestDistance] = [index, distance];
    }
    if (best < 0) return mouth ? MOUTH : weightHere >= 1 ? RIGID : FADING;
    return (mouth ? MOUTH_OR_EYE : EYE) + best - 1;
  };
  /** Row pieces of the region where the weight is not 0, cut by kind; `step` 2 for chroma. */
  const cutRuns = (step: number): Runs => {
    const runs: number[] = [];
    for (let row = 0; row < h; row += step) {
      let open = -1;
      let openKind = -1;
      for (let col = 0; col <= w; col += step) {
        const weightHere = col < w ? weight[row * w + col]! : 0;
        const kind = weightHere > 0 ? kindAt(x0 + col, y0 + row, weightHere) : -1;
        if (kind === openKind) continue;
        if (openKind >= 0) runs.push((y0 + row) / step, (x0 + open) / step, (x0 + col) / step, openKind);
        open = col;
        openKind = kind;
      }
    }
    return { list: Int32Array.from(runs), count: runs.length / 4 };
  };
  return { x0, y0, width: w, height: h, weight, reach, lumaRuns: cutRuns(1), chromaRuns: cutRuns(2) };
}
