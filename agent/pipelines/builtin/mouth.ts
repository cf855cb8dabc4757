// The mouth: tables built once per session from the rig (per column of the mouth's own
// frame), and the per-frame map that moves a run's pixels by the lips and the jaw, saying
// where the mouth texture shows through. The eyes are in eyes.ts.
import { type FaceRig, interpolate, smoothstep, UPPER_LIFT } from '../../../src/contract/face-rig.ts';
import { type ColumnFrame, columnFrame } from './column-frame.ts';
import { smoothLine } from './smooth-line.ts';

/** How far toward the face's sides (share of the way) the jaw's drop reaches… */
const JAW_REACH = 0.7;
/**
 * …and at least this many widest openings past the corners, so that across the columns the
 * drop changes by at most a pixel a pixel. Faded over a few pixels (a face turned so its side
 * is near a corner), it drew a step in the jaw line and cheek at a wide opening (issue 46).
 */
const JAW_FADE = 1.5;
/**
 * Beside the mouth the cheeks follow the jaw down by this share of its drop, fading up to the
 * nose and out to 1.4 × the corners' distance (within the region).
 */
const CHEEK_FOLLOW = 0.2;
const CHEEK_REACH = 1.4;
/**
 * The nostrils' base follows the jaw down by this share of its drop (the upper lip's skin
 * stretching), across the nose's width (about 0.7 × the mouth's), fading out up the nose over
 * about the philtrum's length and before the lip.
 */
const NOSTRIL_FOLLOW = 0.06;
const NOSE_WIDTH = 0.7;
/**
 * The gap closes this share of the way to each corner: the corners stay together, as lips do.
 * Open to the corners themselves, a smile's upturned parting line drew a dark horn at each end.
 */
const LENS_REACH = 0.85;
/** Rows over which the gap's edge fades in under the upper lip, and over the lower lip. */
const EDGE_TOP = 1.25;
const EDGE_BOTTOM = 1.5;
/** Where the gap is thinner than this (px, toward the corners) the inside shows only partly… */
const TIP_FADE = 3;
/**
 * …and from this share of the way to the gap's ends it fades out into the lips' own pixels:
 * the corners of an open mouth are shadowed lip, not the throat. Dark to its very tips, the
 * gap of a smile (its parting line turned up at the ends) drew two horns past the corners.
 */
const TIP_FROM = 0.5;
/** The lower teeth start to show once the gap is this share of the widest opening past the upper teeth… */
const LOWER_TEETH_FROM = 0.3;
/** …and rise by this share of the gap's further growth. */
const LOWER_TEETH_RISE = 0.6;

export interface MouthTables extends ColumnFrame {
  split: Float32Array;
  /** How far the lip edge at this column drops, per unit of the centre's drop (the lens shape). */
  lens: Float32Array;
  /** How much of the mouth's inside shows at this column: fading out toward the corners, where lips meet. */
  tip: Float32Array;
  /** How far the jaw below this column drops (1 under the mouth, 0 at the face's sides). */
  lateral: Float32Array;
  /** How far the cheek beside the mouth at this column follows the jaw (none across the lips). */
  cheek: Float32Array;
  /** How far the nostrils' base above this column follows the jaw (0 beyond the nose's wings). */
  nostril: Float32Array;
  /** v where the nostrils' pull fades out up the nose, and down the philtrum. */
  nostrilTop: number;
  nostrilBottom: number;
  /** Where the jaw's motion fades out below the chin. */
  fadeStart: Float32Array;
  fadeEnd: Float32Array;
  /** How much rounding moves this column, and this row (from vMin, 1 px apart). */
  roundAcross: Float32Array;
  roundAlong: Float32Array;
  nose: number;
  /** Depth below the lip over which the lip's lens shape gives way to the jaw's. */
  blend: number;
  halfWidth: number;
  maxOpen: number;
  textureU: number;
  /** Rows of teeth at the texture's top (anchored under the upper lip); the cavity between spans the gap. */
  teeth: number;
  /** Rows of lower teeth at the texture's bottom (anchored on the lower lip, shown on wide openings). */
  lowerTeeth: number;
  /** The photo's upper inner lip edge per column, when it shows the mouth's inside (pressing closes it). */
  inner: Float32Array | null;
  // Per frame: the gap's edges per column (opening); or, pressing, where the lips meet and
  // how far the upper lip comes down and the lower lip up to meet there.
  top: Float32Array;
  bottom: Float32Array;
  pressing: boolean;
  meet: Float32Array;
  drop: Float32Array;
  rise: Float32Array;
}

/**
 * The mouth: the lower lip and jaw drop (most at the middle of the lips, the lens shape of
 * an open mouth; the whole chin below), the upper lip rises a little, the lips draw together
 * or spread; the gap between them shows the texture. True when some pixel shows it.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the per-pixel kernel: one pass with no calls inside its loop, the renderer's hottest code (bench/renderer)
export function mapMouth(
  m: MouthTables,
  open: number,
  round: number,
  textureRows: number,
  n: number,
  sx: Float32Array,
  sy: Float32Array,
  alpha: Float32Array,
  tu: Float32Array,
  tv: Float32Array,
): boolean {
  const { ox, oy, ax, ay, u0, columns, vMin, vMax, nose, blend, textureU, teeth, lowerTeeth, maxOpen } = m;
  const cavityRows = textureRows - 1 - teeth - lowerTeeth;
  const lowerFrom = LOWER_TEETH_FROM * maxOpen;
  const { cheek: cheekAt, nostril: nostrilAt, nostrilTop, nostrilBottom } = m;
  const {
    split: splitAt,
    lens: lensAt,
    lateral: lateralAt,
    fadeStart: fadeStartAt,
    fadeEnd: fadeEndAt,
    top: topAt,
    bottom: bottomAt,
    roundAcross,
    roundAlong,
  } = m;
  const { pressing, meet: meetAt, drop: dropAt, rise: riseAt } = m;
  const lift = open * UPPER_LIFT;
  const blendScale = 1 / blend;
  const tipAt = m.tip;
  let textured = false;
  for (let i = 0; i < n; i++) {
    alpha[i] = 0;
    const dx = sx[i]! - ox;
    const dy = sy[i]! - oy;
    let u = dx * ax + dy * ay;
    const v = -dx * ay + dy * ax;
    if (v < vMin || v >= vMax) continue;
    let k = u - u0;
    if (k < 0 || k >= columns - 1) continue;
    if (round !== 0) {
      u *= 1 + round * roundAcross[k | 0]! * roundAlong[(v - vMin) | 0]!;
      k = u - u0;
      if (k < 0 || k >= columns - 1) continue;
    }
    const k0 = k | 0;
    const f = k - k0;
    if (pressing) {
      // Lips pressed: the upper lip's edge comes down (not at all at the nose) and the lower
      // lip's comes up (the pull fading toward the chin) until they meet over the teeth.
      const meet = meetAt[k0]! + (meetAt[k0 + 1]! - meetAt[k0]!) * f;
      let sv = v;
      if (v < meet) {
        const drop = dropAt[k0]! + (dropAt[k0 + 1]! - dropAt[k0]!) * f;
        if (drop > 0 && v > nose) {
          let t = (v - nose) / (meet - nose);
          t = t > 1 ? 1 : t;
          sv = v - drop * t * t * (3 - 2 * t);
        }
      } else {
        const rise = riseAt[k0]! + (riseAt[k0 + 1]! - riseAt[k0]!) * f;
        let t = (v - meet) * blendScale;
        t = t > 1 ? 1 : t;
        sv = v + rise * (1 - t * t * (3 - 2 * t));
      }
      sx[i] = ox + u * ax - sv * ay;
      sy[i] = oy + u * ay + sv * ax;
      continue;
    }
    const top = topAt[k0]! + (topAt[k0 + 1]! - topAt[k0]!) * f;
    const bottom = bottomAt[k0]! + (bottomAt[k0 + 1]! - bottomAt[k0]!) * f;
    let sv: number;
    if (v < top) {
      // Upper lip: lifted at its edge, not at all at the nose.
      const split = splitAt[k0]!;
      const up = lift * lensAt[k0]!;
      if (up === 0 || v <= nose) sv = v;
      else {
        let t = (v + up - nose) / (split - nose);
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        sv = v + up * t * t * (3 - 2 * t);
      }
      // Beside the mouth, the cheek comes down a little with the jaw, less toward the nose.
      const cheek = open * cheekAt[k0]!;
      if (cheek > 0 && v > nose) {
        let t = (v - nose) / (split - nose);
        t = t > 1 ? 1 : t;
        sv -= cheek * t * t * (3 - 2 * t);
      }
      // The nostrils' base follows too, a little: most at the base, none up the nose or at the lip.
      const pull = open * nostrilAt[k0]!;
      if (pull > 0 && v > nostrilTop && v < nostrilBottom) {
        let t = v <= nose ? (v - nostrilTop) / (nose - nostrilTop) : (nostrilBottom - v) / (nostrilBottom - nose);
        t = t > 1 ? 1 : t;
        sv -= pull * t * t * (3 - 2 * t);
      }
    } else if (v < bottom) {
      // In the gap; whichever lip edge is nearer shows through the part of the pixel outside it.
      const split = splitAt[k0]! + (splitAt[k0 + 1]! - splitAt[k0]!) * f;
      sv = v - top < bottom - v ? split - 0.5 : split + 0.5;
    } else {
      // Lower lip, chin, jaw: the lens shape at the lip gives way to the jaw's below it.
      const lens = lensAt[k0]!;
      let t = (v - bottom) * blendScale;
      t = t > 1 ? 1 : t;
      const s = t * t * (3 - 2 * t);
      // (The cheek's share carries on from above the parting line, giving way to the jaw's.)
      const amount = open * (lens + (lateralAt[k0]! - lens) * s + cheekAt[k0]! * (1 - s));
      sv = v - amount;
      const fadeStart = fadeStartAt[k0]!;
      if (sv > fadeStart) {
        // Under the chin the motion fades (the neck stays): the photo's rows fadeStart … fadeEnd
        // are drawn from fadeStart + amount down to fadeEnd, where the motion is gone.
        let s = (sv - fadeStart) / (fadeEndAt[k0]! - fadeStart - amount);
        s = s > 1 ? 1 : s;
        sv = v - amount * (1 - s * s * (3 - 2 * s));
      }
    }
    sx[i] = ox + u * ax - sv * ay;
    sy[i] = oy + u * ay + sv * ax;
    // The share of this pixel (one pixel tall) inside the gap: its edges are smooth.
    const covered = (v + 0.5 < bottom ? v + 0.5 : bottom) - (v - 0.5 > top ? v - 0.5 : top);
    if (covered > 0) {
      // Soft inner edges, the lower lip's (its lit rim) softer, and the thin tips at the
      // corners fading out: the lips' own pixels show through the gap's margin.
      const gap = bottom - top;
      const soft =
        Math.min(1, (v - top + 0.5) / EDGE_TOP, (bottom - v + 0.5) / EDGE_BOTTOM, gap / TIP_FADE) *
        (tipAt[k0]! + (tipAt[k0 + 1]! - tipAt[k0]!) * f);
      alpha[i] = (covered > 1 ? 1 : covered) * soft;
      tu[i] = u - textureU;
      const depth = v - top;
      const height = bottom - top;
      // The lower teeth's edge rises from behind the lower lip once the gap is wide.
      let shown = (height - teeth - lowerFrom) * LOWER_TEETH_RISE;
      shown = shown < 0 ? 0 : shown > lowerTeeth ? lowerTeeth : shown;
      const above = bottom - v;
      if (depth <= teeth) tv[i] = depth;
      else if (above < shown) tv[i] = textureRows - 1 - lowerTeeth + (shown - above);
      else tv[i] = teeth + ((depth - teeth) * cavityRows) / Math.max(1, height - teeth - shown);
      textured = true;
    }
  }
  return textured;
}

/** Pressed lips meet this share of the way down the photo's gap: the upper lip moves less than the lower. */
const UPPER_PRESS = 0.35;

/**
 * Sets the tables' per-frame columns for this mouth (`open` in px): the gap's edges, or, when
 * pressing a photo's parted lips (and not opening), where they meet. True when the mouth differs
 * from the photo at all.
 */
export function poseMouth(m: MouthTables, open: number, round: number, press: number): boolean {
  m.pressing = open <= 0.05 && press > 0.01 && m.inner !== null;
  if (m.pressing) {
    // The lower lip does most of the closing; the upper lip joins for a full press.
    const { split, meet, drop, rise } = m;
    const inner = m.inner!;
    const lower = press * (1 - UPPER_PRESS);
    const upper = UPPER_PRESS * Math.max(0, 2 * press - 1);
    for (let k = 0; k < m.columns; k++) {
      const gap = split[k]! - inner[k]!;
      drop[k] = upper * gap;
      rise[k] = lower * gap;
      meet[k] = inner[k]! + drop[k]!;
    }
    return true;
  }
  if (!(open > 0.05 || round !== 0)) return false;
  const { split, lens, top, bottom } = m;
  const lift = open * UPPER_LIFT;
  for (let k = 0; k < m.columns; k++) {
    top[k] = split[k]! - lift * lens[k]!;
    bottom[k] = split[k]! + open * lens[k]!;
  }
  return true;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the mouth's geometry, computed once per identity in the order each table needs the last
export function mouthTables(rig: FaceRig): MouthTables {
  const mouth = rig.mouth;
  const [left, right] = mouth.corners;
  // The jaw moves less toward the face's sides and not at all from 70 % of the way there.
  const fade = JAW_FADE * mouth.maxOpen;
  const jawLeft = Math.min(JAW_REACH * Math.min(mouth.jaw[0]![0], left * 1.5), 0.9 * left - fade);
  const jawRight = Math.max(JAW_REACH * Math.max(mouth.jaw[mouth.jaw.length - 1]![0], right * 1.5), 0.9 * right + fade);
  const chin = interpolate(mouth.jaw, 0);
  // Long enough that the neck under the dropped chin is squashed gently (at most ~3×).
  const span = Math.max(0.3 * chin, 1.6 * mouth.maxOpen);
  const halfWidth = (right - left) / 2;
  // Wide enough for the jaw, and for the cheeks beside the corners.
  const u0 = Math.floor(Math.min(jawLeft, 1.1 * CHEEK_REACH * left)) - 2;
  const columns = Math.ceil(Math.max(jawRight, 1.1 * CHEEK_REACH * right)) + 3 - u0;
  const split = new Float32Array(columns);
  const lens = new Float32Array(columns);
  const tip = new Float32Array(columns);
  const lateral = new Float32Array(columns);
  const cheek = new Float32Array(columns);
  const nostril = new Float32Array(columns);
  const fadeStart = new Float32Array(columns);
  const fadeEnd = new Float32Array(columns);
  const roundAcross = new Float32Array(columns);
  let deepest = 0;
  for (let k = 0; k < columns; k++) {
    const u = u0 + k;
    split[k] = interpolate(mouth.split, u);
    const corner = u < 0 ? left : right;
    const across = u / (LENS_REACH * corner);
    lens[k] = across >= 1 ? 0 : 1 - across * across;
    tip[k] = 1 - smoothstep(TIP_FROM, 1, Math.abs(across));
    const side = u < 0 ? jawLeft : jawRight;
    lateral[k] = 1 - smoothstep(0.9 * Math.abs(corner), Math.abs(side), Math.abs(u));
    cheek[k] =
      CHEEK_FOLLOW * (1 - smoothstep(Math.abs(corner), CHEEK_REACH * Math.abs(corner), Math.abs(u))) * (1 - lens[k]!);
    nostril[k] = NOSTRIL_FOLLOW * (1 - smoothstep(0.6 * NOSE_WIDTH * halfWidth, NOSE_WIDTH * halfWidth, Math.abs(u)));
    const jaw = interpolate(mouth.jaw, u);
    fadeStart[k] = jaw - 0.1 * chin;
    fadeEnd[k] = jaw + span;
    deepest = Math.max(deepest, jaw + span);
    // Rounding fades out before the table's sides, or the region's edge would show as a seam.
    const reach = Math.min(1.7 * halfWidth, (u < 0 ? -u0 : u0 + columns - 1) - 2);
    roundAcross[k] = 1 - smoothstep(Math.min(0.7 * halfWidth, 0.5 * reach), reach, Math.abs(u));
  }
  // The philtrum's length (nose to the lips' parting line, at the middle) sizes the nostrils' pull.
  const philtrum = Math.max(1, interpolate(mouth.split, 0) - mouth.nose);
  const nostrilTop = mouth.nose - philtrum;
  const nostrilBottom = mouth.nose + 0.5 * philtrum;
  const noseRow = Math.floor(mouth.nose) - 1;
  const vMin = Math.min(noseRow, Math.floor(nostrilTop) - 1);
  const vMax = Math.ceil(deepest) + 2;
  const roundAlong = new Float32Array(vMax - vMin + 1);
  // …and before the nose above the mouth (the region's top edge), the chin's reach below.
  for (let j = 0; j < roundAlong.length; j++) {
    const v = vMin + j;
    roundAlong[j] = 1 - smoothstep(0, v < 0 ? Math.max(1, -noseRow - 1) : 0.8 * chin, Math.abs(v));
  }
  smoothLine(split, mouth.corners, u0);
  // The jaw's polyline bends at each landmark and stops flat at its ends: where the neck's fade
  // starts should curve through those bends, or each shows in the outline as a kink.
  smoothLine(fadeStart, [u0, u0 + columns - 1], u0, Math.round(0.1 * chin));
  smoothLine(fadeEnd, [u0, u0 + columns - 1], u0, Math.round(0.1 * chin));
  let inner: Float32Array | null = null;
  if (mouth.inner && mouth.inner.length > 1) {
    inner = new Float32Array(columns);
    for (let k = 0; k < columns; k++) inner[k] = Math.min(split[k]!, interpolate(mouth.inner, u0 + k));
    smoothLine(inner, mouth.corners, u0);
    for (let k = 0; k < columns; k++) inner[k] = Math.min(inner[k]!, split[k]!);
  }
  return {
    ...columnFrame(mouth, u0, columns, vMin, vMax, rig.width, rig.height),
    split,
    lens,
    tip,
    lateral,
    cheek,
    nostril,
    nostrilTop,
    nostrilBottom,
    fadeStart,
    fadeEnd,
    roundAcross,
    roundAlong,
    nose: mouth.nose,
    blend: 0.6 * chin,
    halfWidth,
    maxOpen: mouth.maxOpen,
    textureU: mouth.textureU,
    teeth: mouth.teeth,
    lowerTeeth: mouth.lowerTeeth ?? 0,
    inner,
    top: new Float32Array(columns),
    bottom: new Float32Array(columns),
    pressing: false,
    meet: new Float32Array(columns),
    drop: new Float32Array(columns),
    rise: new Float32Array(columns),
  };
}
