// The eyes: tables built once per session from the rig (per column of each eye's own frame),
// and the per-frame map that moves a run's pixels by the eyelids (blinks), the gaze (the
// eye's inside sliding between the lids) and the brow (lifted on emphasis), saying where the
// eye shows through a closing lid.
import { type FaceRig, interpolate } from '../../../src/contract/face-rig.ts';
import { type ColumnFrame, columnFrame } from './column-frame.ts';

/** The lid's margin (lashes), as a share of the lid skin above it: carried down, not stretched. */
const LASH_SHARE = 0.25;
/** The brow's lift reaches this share of the eye's half-width above the crease (brow and a little forehead), and lifts at most this share of it. */
const BROW_REACH = 1.3;
const BROW_LIFT = 0.12;
/** The brow is wider than the eye: the region reaches this share of the eye's half-width past each corner. */
const BROW_WIDEN = 0.5;
/**
 * Landmarks put an eye's corners and its lower lid near the corners a pixel or two inside
 * the eye on tilted and dim photos: a closed lid that met the lower lid there left a sliver
 * of white. The lids close over at least a half-ellipse this share of the eye's opening
 * deep, reaching this share of its half-width past each corner.
 */
const CORNER_DEPTH = 0.6;
const CORNER_REACH = 0.3;

export interface EyeTables extends ColumnFrame {
  upper: Float32Array;
  /** Where a closing lid stops: the lower lid, and over the corners' half-ellipse. */
  lower: Float32Array;
  /** The lower lid itself: the open eye the gaze slides lies above it, between the corners. */
  openLower: Float32Array;
  crease: Float32Array;
  /** Half the eye's width (its corners sit at ±halfWidth). */
  halfWidth: number;
  /** How far above the crease the brow's lift reaches, and the most it lifts (px). */
  browReach: number;
  maxBrowLift: number;
  /** Per frame: how far the gaze slides the eye's inside along the eye (px), and the brow is lifted (px). */
  gazeU: number;
  browLift: number;
}

/**
 * An eyelid: the skin between the crease and the lid's margin stretches down over the eye;
 * the margin itself (lashes) moves down unstretched, so it stays a crisp line. The pixel the
 * lid's edge crosses shows both, in proportion (tu, tv: where the eye is; alpha: its share).
 * True when some pixel is shared.
 * Pixels outside this eye's region are left as they are (alpha included: the caller clears
 * it), so both eyes' maps can run over one run.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the per-pixel kernel: one pass with no calls inside its loop, the renderer's hottest code (bench/renderer)
export function mapEye(
  eye: EyeTables,
  blink: number,
  n: number,
  sx: Float32Array,
  sy: Float32Array,
  alpha: Float32Array,
  tu: Float32Array,
  tv: Float32Array,
): boolean {
  const { ox, oy, ax, ay, u0, columns, vMin, vMax, halfWidth, gazeU, browLift, browReach } = eye;
  const upperAt = eye.upper;
  const lowerAt = eye.lower;
  const openLowerAt = eye.openLower;
  const creaseAt = eye.crease;
  let shared = false;
  /** Pixel i shows the photo at (u, sv) of this eye's frame. */
  const stretch = (i: number, u: number, sv: number) => {
    sx[i] = ox + u * ax - sv * ay;
    sy[i] = oy + u * ay + sv * ax;
  };
  for (let i = 0; i < n; i++) {
    // Into the eye's frame and its table's column, as mapMouth does: inline, per pixel.
    const dx = sx[i]! - ox;
    const dy = sy[i]! - oy;
    const u = dx * ax + dy * ay;
    const v = -dx * ay + dy * ax;
    const k = u - u0;
    if (k < 0 || k >= columns - 1 || v < vMin || v >= vMax) continue;
    const k0 = k | 0;
    const f = k - k0;
    const upper = upperAt[k0]! + (upperAt[k0 + 1]! - upperAt[k0]!) * f;
    const lower = lowerAt[k0]! + (lowerAt[k0 + 1]! - lowerAt[k0]!) * f;
    const crease = creaseAt[k0]! + (creaseAt[k0 + 1]! - creaseAt[k0]!) * f;
    // The brow's lift here: full from the crease up (the brow sits just above it), fading out
    // up the forehead and past the eye's corners before the region ends; below the crease the
    // lid skin stretches, from the full lift at the crease to none at the lid's edge.
    let lift = 0;
    if (browLift > 0) {
      const across = u < 0 ? -u / halfWidth : u / halfWidth;
      let side = (across - 1) / (0.9 * BROW_WIDEN);
      side = side < 0 ? 1 : side > 1 ? 0 : 1 - side * side * (3 - 2 * side);
      lift = browLift * side;
    }
    if (v < crease) {
      if (lift > 0) {
        let t = (crease - v) / browReach;
        t = t < 0.45 ? 0 : t > 1 ? 1 : (t - 0.45) / 0.55;
        stretch(i, u, v + lift * (1 - t * t * (3 - 2 * t)));
      }
      continue;
    }
    const gap = lower - upper;
    if (gap <= 0) {
      // Past the corners there is no eye to close; the skin under a lifted brow still stretches.
      if (lift > 0 && v < upper) stretch(i, u, v + (lift * (upper - v)) / (upper - crease));
      continue;
    }
    // Closed, the lid edge passes the lower lid's edge by half a pixel (less toward the
    // corners, where the gap closes): no eye shows.
    const edge = upper + blink * (gap + (gap < 2 ? 0.25 * gap : 0.5));
    // The part of this pixel (one pixel tall) the lid covers.
    let lid = edge - (v - 0.5);
    // Open lids (the eyes drawn for the gaze or the brows alone) keep the lid skin, but for the brow's stretch.
    if (blink === 0 && lid > 0) {
      if (lift > 0) stretch(i, u, v + (lift * (upper - v)) / (upper - crease));
      continue;
    }
    if (lid <= 0) {
      // The eye itself, between the lids: the gaze slides it sideways (the iris whole, the
      // white taking up the difference toward the corners), each pixel drawn from the same
      // height within the opening there, so the lids and lashes stay where they are.
      const openLower = openLowerAt[k0]! + (openLowerAt[k0 + 1]! - openLowerAt[k0]!) * f;
      if (gazeU !== 0 && v > edge && v < openLower) {
        const across = u < 0 ? -u / halfWidth : u / halfWidth;
        let t = (across - 0.35) * 2.2;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        const su = u - gazeU * (1 - t * t * (3 - 2 * t));
        const s = su - u0;
        if (s >= 0 && s < columns - 1) {
          const s0 = s | 0;
          const g = s - s0;
          const top = upperAt[s0]! + (upperAt[s0 + 1]! - upperAt[s0]!) * g + 0.5;
          const bottom = openLowerAt[s0]! + (openLowerAt[s0 + 1]! - openLowerAt[s0]!) * g - 0.5;
          const within = (v - upper) / (openLower - upper);
          const sv = bottom > top ? top + within * (bottom - top) : top;
          sx[i] = ox + su * ax - sv * ay;
          sy[i] = oy + su * ay + sv * ax;
        }
      }
      continue;
    }
    lid = lid > 1 ? 1 : lid;
    const margin = LASH_SHARE * (upper - crease);
    const at = v < edge ? v : edge;
    let sv =
      at < edge - margin
        ? crease + ((at - crease) * (upper - margin - crease)) / (edge - margin - crease)
        : at - (edge - upper);
    if (lift > 0 && v < edge) sv += (lift * (edge - v)) / (edge - crease);
    if (lid < 1) {
      tu[i] = sx[i]!;
      tv[i] = sy[i]!;
      alpha[i] = 1 - lid;
      shared = true;
    }
    sx[i] = ox + u * ax - sv * ay;
    sy[i] = oy + u * ay + sv * ax;
  }
  return shared;
}

export function eyeTables(eye: FaceRig['eyes'][number], width: number, height: number): EyeTables {
  const reach = (BROW_WIDEN * (eye.corners[1] - eye.corners[0])) / 2;
  const u0 = Math.floor(eye.corners[0] - reach) - 2;
  const columns = Math.ceil(eye.corners[1] + reach) + 3 - u0;
  const upper = new Float32Array(columns);
  const lower = new Float32Array(columns);
  const openLower = new Float32Array(columns);
  const crease = new Float32Array(columns);
  let vMin = Infinity;
  let vMax = -Infinity;
  const centre = (eye.corners[0] + eye.corners[1]) / 2;
  const cornerReach = ((1 + CORNER_REACH) * (eye.corners[1] - eye.corners[0])) / 2;
  let opening = 0;
  for (let u = Math.ceil(eye.corners[0]); u < eye.corners[1]; u++)
    opening = Math.max(opening, interpolate(eye.lower, u) - interpolate(eye.upper, u));
  for (let k = 0; k < columns; k++) {
    const u = u0 + k;
    const inside = u > eye.corners[0] && u < eye.corners[1];
    upper[k] = interpolate(eye.upper, u);
    // Beyond the corners the lids meet: nothing to close, but for the corners' half-ellipse.
    const across = (u - centre) / cornerReach;
    const floor = across > -1 && across < 1 ? upper[k]! + CORNER_DEPTH * opening * Math.sqrt(1 - across * across) : 0;
    openLower[k] = inside ? Math.max(upper[k]!, interpolate(eye.lower, u)) : upper[k]!;
    lower[k] = Math.max(openLower[k]!, floor);
    crease[k] = interpolate(eye.crease, u);
    vMin = Math.min(vMin, crease[k]!);
    vMax = Math.max(vMax, lower[k]! + 1);
  }
  // The brow above the crease lifts on accents: the region reaches up over it and the forehead above.
  const halfWidth = (eye.corners[1] - eye.corners[0]) / 2;
  const browReach = BROW_REACH * halfWidth;
  vMin -= browReach + 1;
  return {
    ...columnFrame(eye, u0, columns, vMin, vMax, width, height),
    upper,
    lower,
    openLower,
    crease,
    halfWidth,
    browReach,
    maxBrowLift: BROW_LIFT * halfWidth,
    gazeU: 0,
    browLift: 0,
  };
}
