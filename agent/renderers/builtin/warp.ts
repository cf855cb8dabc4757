// The per-frame warp: the photo itself, resampled. Each output pixel of the head region is
// mapped back to where it came from in the photo (backward mapping, one bilinear sample, so
// nothing is blurred twice): first through the head's rigid motion (fading out toward the
// neck and background), then through the mouth's or an eye's local deformation. Between
// parted lips the mouth texture shows through, blended at the edges. Everything outside the
// head region was copied once and never changes.
//
// Speed: the frame stays in I420 (the encoder's format) and only the head region is
// touched, only when something moved by a visible step. Built once per session: the head
// motion's weight per pixel, and the region cut into runs (row pieces) by what moves them:
// the head rigidly (an affine map, stepped in fixed point), the head fading out (weighted),
// the mouth or an eye (mapped, then sampled). Bilinear sampling is 8-bit fixed point; per
// frame there is no allocation, only typed-array arithmetic.
import { interpolate, smoothstep, UPPER_LIFT, type FaceRig, type LocalFrame, type RgbaImage } from './rig.ts';

/** Where the face is this instant. */
export interface FacePose {
  /** 0 closed … 1 wide open. */
  open: number;
  /** Lips drawn together (positive, an "oo") or spread (negative, an "ee"); about ±0.1. */
  round: number;
  /** 0 open … 1 closed eyelids. */
  blink: number;
  /** Head translation, px (kept within MAX_SHIFT of the face's height). */
  dx: number;
  dy: number;
  /** Head roll about the neck, radians (positive: clockwise on screen; kept within MAX_ROLL). */
  roll: number;
}

export const NEUTRAL_POSE: Readonly<FacePose> = { open: 0, round: 0, blink: 0, dx: 0, dy: 0, roll: 0 };

/** Bounds of the head's motion: the local regions are widened by what they allow. */
const MAX_SHIFT = 0.03;
const MAX_ROLL = 0.04;
/**
 * The head is redrawn once its motion since the last drawing adds up to this (px): idle sways
 * then cost a frame in three or so, in steps a video encoder's own noise hides.
 */
const HEAD_STEP_PX = 0.5;
/** The same for the lips (the lower lip's drop, the corners' travel). */
const LIP_STEP_PX = 0.5;
/** How far toward the face's sides (share of the way) the jaw's drop reaches. */
const JAW_REACH = 0.7;
/** The lid's margin (lashes), as a share of the lid skin above it: carried down, not stretched. */
const LASH_SHARE = 0.25;

// What moves a run's pixels: the head rigidly, the head fading out, the mouth, an eye (EYE + n for eye n).
const RIGID = 0;
const FADING = 1;
const MOUTH = 2;
const EYE = 3;

export function i420Length(width: number, height: number): number {
  return width * height + 2 * ((width + 1) >> 1) * ((height + 1) >> 1);
}

interface ColumnFrame {
  ox: number;
  oy: number;
  ax: number;
  ay: number;
  /** u of column 0 of the tables. */
  u0: number;
  columns: number;
  /** The local box (v range), and its bounding box in the image. */
  vMin: number;
  vMax: number;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

interface MouthTables extends ColumnFrame {
  split: Float32Array;
  /** How far the lip edge at this column drops, per unit of the centre's drop (the lens shape). */
  lens: Float32Array;
  /** How far the jaw below this column drops (1 under the mouth, 0 at the face's sides). */
  lateral: Float32Array;
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
  /** Rows of teeth at the texture's top (anchored under the upper lip); the rest spans the gap below them. */
  teeth: number;
  // Per frame: the gap's edges per column.
  top: Float32Array;
  bottom: Float32Array;
}

interface EyeTables extends ColumnFrame {
  upper: Float32Array;
  lower: Float32Array;
  crease: Float32Array;
}

interface Texture {
  width: number;
  height: number;
  /** Full-resolution Y, U and V. */
  y: Float32Array;
  u: Float32Array;
  v: Float32Array;
}

/** Row pieces of one plane: [row, start, end, kind] each, in that plane's pixels. */
interface Runs {
  list: Int32Array;
  count: number;
}

export class FaceWarp {
  readonly width: number;
  readonly height: number;
  readonly #base: Uint8Array;
  readonly #chromaWidth: number;
  readonly #chromaHeight: number;
  readonly #uOffset: number;
  readonly #vOffset: number;
  // The head region (a box with even origin and size, so chroma lines up), and the weight of the head's motion in it.
  readonly #rx0: number;
  readonly #ry0: number;
  readonly #rw: number;
  readonly #rh: number;
  readonly #weight: Float32Array;
  readonly #lumaRuns: Runs;
  readonly #chromaRuns: Runs;
  readonly #pivotX: number;
  readonly #pivotY: number;
  readonly #maxShift: number;
  readonly #mouth: MouthTables;
  readonly #eyes: EyeTables[];
  /** The mouth, then the eyes. */
  readonly #locals: ColumnFrame[];
  /** The head's motion as drawn (updated in place, no allocation per frame). */
  readonly #head: HeadMotion;
  readonly #texture: Texture | undefined;
  // Per run: where each pixel samples the photo, and the texture's share and position.
  readonly #sx: Float32Array;
  readonly #sy: Float32Array;
  readonly #alpha: Float32Array;
  readonly #tu: Float32Array;
  readonly #tv: Float32Array;
  /** The most a roll moves a pixel of the head region, per radian: its weighted distance from the pivot. */
  readonly #reach: number;
  /** Per local region (mouth, then eyes): its farthest point from the pivot. */
  readonly #localReach: Float64Array;
  /** Per local region, this frame: the box (luma pixels) its pixels can be in, given the head's pose. */
  readonly #localBox: Int32Array;
  /** What `out` shows (the last render's pose; the head's part only changes by HEAD_STEP_PX). */
  readonly #drawn = { valid: false, tx: 0, ty: 0, roll: 0, open: 0, round: 0, blink: 0 };

  constructor(rig: FaceRig, base: Uint8Array, mouthTexture: RgbaImage | undefined) {
    const { width, height, head } = rig;
    this.width = width;
    this.height = height;
    if (base.length !== i420Length(width, height)) throw new Error(`the base picture is not ${width}×${height} I420`);
    this.#base = base;
    this.#chromaWidth = (width + 1) >> 1;
    this.#chromaHeight = (height + 1) >> 1;
    this.#uOffset = width * height;
    this.#vOffset = this.#uOffset + this.#chromaWidth * this.#chromaHeight;
    this.#pivotX = head.pivot[0];
    this.#pivotY = head.pivot[1];
    this.#head = { sin: 0, c1: 0, tx: 0, ty: 0, px: head.pivot[0], py: head.pivot[1] };
    this.#maxShift = MAX_SHIFT * head.faceHeight;

    const outer = [head.radii[0] * head.fade, head.radii[1] * head.fade] as const;
    const box = boundingBox(head, -outer[0], outer[0], -outer[1], outer[1], width, height);
    this.#rx0 = box.x0 & ~1;
    this.#ry0 = box.y0 & ~1;
    this.#rw = Math.min(width & ~1, (box.x1 + 1) & ~1) - this.#rx0;
    this.#rh = Math.min(height & ~1, (box.y1 + 1) & ~1) - this.#ry0;
    this.#weight = new Float32Array(this.#rw * this.#rh);
    let reach = 0;
    for (let row = 0; row < this.#rh; row++) {
      for (let col = 0; col < this.#rw; col++) {
        const x = this.#rx0 + col;
        const y = this.#ry0 + row;
        const dx = x - head.origin[0];
        const dy = y - head.origin[1];
        const u = (dx * head.axis[0] + dy * head.axis[1]) / head.radii[0];
        const v = (-dx * head.axis[1] + dy * head.axis[0]) / head.radii[1];
        const weight = 1 - smoothstep(1, head.fade, Math.sqrt(u * u + v * v));
        this.#weight[row * this.#rw + col] = weight;
        reach = Math.max(reach, weight * Math.hypot(x - this.#pivotX, y - this.#pivotY));
      }
    }
    this.#reach = reach;

    this.#mouth = mouthTables(rig);
    this.#eyes = rig.eyes.map((eye) => eyeTables(eye, width, height));
    this.#texture = mouthTexture && texturePlanes(mouthTexture);
    this.#locals = [this.#mouth, ...this.#eyes];

    // Where the head's motion may bring a local region's pixels from: its box, widened.
    const reaches = [this.#mouth, ...this.#eyes].map((local) =>
      Math.max(...[local.x0, local.x1].flatMap((x) => [local.y0, local.y1].map((y) => Math.hypot(x - this.#pivotX, y - this.#pivotY)))),
    );
    this.#localReach = Float64Array.from(reaches);
    this.#localBox = new Int32Array(4 * reaches.length);
    const margin = Math.ceil(this.#maxShift * Math.SQRT2 + MAX_ROLL * Math.max(...reaches)) + 2;
    const locals = [this.#mouth, ...this.#eyes].map((local) => ({ x0: local.x0 - margin, y0: local.y0 - margin, x1: local.x1 + margin, y1: local.y1 + margin }));
    const kindAt = (x: number, y: number, weight: number): number => {
      const index = locals.findIndex((b) => x >= b.x0 && x < b.x1 && y >= b.y0 && y < b.y1);
      return index < 0 ? (weight >= 1 ? RIGID : FADING) : index === 0 ? MOUTH : EYE + index - 1;
    };
    this.#lumaRuns = this.#cutRuns(1, kindAt);
    this.#chromaRuns = this.#cutRuns(2, kindAt);
    const longest = this.#rw;
    this.#sx = new Float32Array(longest);
    this.#sy = new Float32Array(longest);
    this.#alpha = new Float32Array(longest);
    this.#tu = new Float32Array(longest);
    this.#tv = new Float32Array(longest);
  }

  /** The box the warp may touch (everything else is the photo as it is). */
  get region(): { x: number; y: number; width: number; height: number } {
    return { x: this.#rx0, y: this.#ry0, width: this.#rw, height: this.#rh };
  }

  /** Writes the photo, untouched, into `out` (an I420 frame): the frames only rewrite the head region over it. */
  paintBase(out: Uint8Array): void {
    out.set(this.#base);
    this.#drawn.valid = false;
  }

  /**
   * Brings `out` (the frame this warp drew last, or the base) to this pose. Only what moved
   * is redrawn: the head once its motion adds up to HEAD_STEP_PX, otherwise the mouth or the
   * eyes when they changed.
   */
  render(pose: FacePose, out: Uint8Array): void {
    const mouth = this.#mouth;
    const open = clamp(pose.open, 0, 1) * mouth.maxOpen;
    // Opening draws the corners in a little too.
    const round = clamp(pose.round, -0.2, 0.2) + 0.06 * clamp(pose.open, 0, 1);
    const blink = clamp(pose.blink, 0, 1);
    const roll = clamp(pose.roll, -MAX_ROLL, MAX_ROLL);
    const tx = clamp(pose.dx, -this.#maxShift, this.#maxShift);
    const ty = clamp(pose.dy, -this.#maxShift, this.#maxShift);
    const drawn = this.#drawn;
    const headMoved = !drawn.valid || Math.hypot(tx - drawn.tx, ty - drawn.ty) + Math.abs(roll - drawn.roll) * this.#reach >= HEAD_STEP_PX;
    // Lips too are redrawn once they moved by a step too small to see, and always when they close.
    const mouthChanged =
      (open === 0) !== (drawn.open === 0) || Math.abs(open - drawn.open) >= LIP_STEP_PX || Math.abs(round - drawn.round) * mouth.halfWidth >= LIP_STEP_PX;
    const eyesChanged = blink !== drawn.blink;
    if (!headMoved && !mouthChanged && !eyesChanged) return;
    if (headMoved) {
      drawn.tx = tx;
      drawn.ty = ty;
      drawn.roll = roll;
    }
    if (mouthChanged) {
      drawn.open = open;
      drawn.round = round;
    }
    drawn.valid = true;
    drawn.blink = blink;
    const head = this.#head;
    head.sin = Math.sin(drawn.roll);
    head.c1 = Math.cos(drawn.roll) - 1;
    head.tx = drawn.tx;
    head.ty = drawn.ty;
    const mouthOn = drawn.open > 0.05 || drawn.round !== 0;
    if (mouthOn) {
      const { split, lens, top, bottom } = mouth;
      const lift = drawn.open * UPPER_LIFT;
      for (let k = 0; k < mouth.columns; k++) {
        top[k] = split[k]! - lift * lens[k]!;
        bottom[k] = split[k]! + drawn.open * lens[k]!;
      }
    }
    const eyesOn = blink > 0.01;

    // Where each local region's pixels are this frame (luma pixels): its box, moved by the
    // head's pose. Outside it a local run's pixels move with the head alone.
    const localBox = this.#localBox;
    const shift = Math.hypot(drawn.tx, drawn.ty);
    for (let l = 0; l < this.#locals.length; l++) {
      const local = this.#locals[l]!;
      const d = Math.ceil(shift + Math.abs(drawn.roll) * this.#localReach[l]!) + 2;
      localBox[4 * l] = local.x0 - d;
      localBox[4 * l + 1] = local.y0 - d;
      localBox[4 * l + 2] = local.x1 + d;
      localBox[4 * l + 3] = local.y1 + d;
    }

    for (let plane = 0; plane < 2; plane++) {
      const chroma = plane === 1;
      const { list, count } = chroma ? this.#chromaRuns : this.#lumaRuns;
      for (let r = 0; r < count; r++) {
        const kind = list[4 * r + 3]!;
        const row = list[4 * r]!;
        const start = list[4 * r + 1]!;
        const end = list[4 * r + 2]!;
        if (kind === RIGID) {
          if (headMoved) {
            if (chroma) rigidChroma(head, row, start, end - start, this.#base, this.#chromaWidth, this.#chromaHeight, this.#uOffset, this.#vOffset, out);
            else rigidLuma(head, row, start, end - start, this.#base, this.width, this.height, out);
          }
          continue;
        }
        if (kind === FADING) {
          if (headMoved) this.#fading(chroma, row, start, end, out);
          continue;
        }
        // A local region's run: its box's part through the local map, the rest with the head.
        const l = 4 * (kind - MOUTH);
        const lumaRow = chroma ? 2 * row : row;
        let a = end;
        let b = end;
        if (lumaRow >= localBox[l + 1]! && lumaRow < localBox[l + 3]!) {
          a = Math.max(start, chroma ? localBox[l]! >> 1 : localBox[l]!);
          b = Math.max(a, Math.min(end, chroma ? (localBox[l + 2]! + 1) >> 1 : localBox[l + 2]!));
        }
        if (headMoved) {
          if (a > start) this.#fading(chroma, row, start, a, out);
          if (end > b) this.#fading(chroma, row, b, end, out);
        }
        if (b === a || !(headMoved || (kind === MOUTH ? mouthChanged : eyesChanged))) continue;
        if (!(kind === MOUTH ? mouthOn : eyesOn)) {
          this.#fading(chroma, row, a, b, out);
          continue;
        }
        this.#local(kind, chroma, row, a, b, drawn.open, drawn.round, blink, out);
      }
    }
  }

  /** Pixels [start, end) of a row (in the plane's pixels) moved by the head alone. */
  #fading(chroma: boolean, row: number, start: number, end: number, out: Uint8Array): void {
    const weightRow = ((chroma ? 2 * row : row) - this.#ry0) * this.#rw - this.#rx0;
    if (chroma) warpChroma(this.#head, this.#weight, weightRow, row, start, end - start, this.#base, this.#chromaWidth, this.#chromaHeight, this.#uOffset, this.#vOffset, out);
    else warpLuma(this.#head, this.#weight, weightRow, row, start, end - start, this.#base, this.width, this.height, out);
  }

  /** Pixels [start, end) of a row moved by the head, then by the mouth or an eye. */
  #local(kind: number, chroma: boolean, row: number, start: number, end: number, open: number, round: number, blink: number, out: Uint8Array): void {
    const n = end - start;
    const { width, height } = this;
    const cw = this.#chromaWidth;
    const texture = this.#texture;
    const sx = this.#sx;
    const sy = this.#sy;
    const alpha = this.#alpha;
    const tu = this.#tu;
    const tv = this.#tv;
    // Pixel centres in luma pixels (a chroma sample's centre sits between four luma pixels).
    const y = chroma ? 2 * row + 0.5 : row;
    const weightRow = ((chroma ? 2 * row : row) - this.#ry0) * this.#rw - this.#rx0;
    mapHead(this.#head, this.#weight, weightRow, y, start, n, chroma, sx, sy);
    if (kind === MOUTH) {
      const textured = mapMouth(this.#mouth, open, round, texture ? texture.height : 1, n, sx, sy, alpha, tu, tv) && texture;
      if (chroma) {
        const at = row * cw + start;
        sampleChroma(this.#base, cw, this.#chromaHeight, this.#uOffset, this.#vOffset, sx, sy, n, out, at);
        if (textured) {
          blendTexture(texture.u, texture, alpha, tu, tv, n, out, this.#uOffset + at);
          blendTexture(texture.v, texture, alpha, tu, tv, n, out, this.#vOffset + at);
        }
      } else {
        const at = row * width + start;
        sampleLuma(this.#base, width, height, sx, sy, n, out, at);
        if (textured) blendTexture(texture.y, texture, alpha, tu, tv, n, out, at);
      }
      return;
    }
    const shared = mapEye(this.#eyes[kind - EYE]!, blink, n, sx, sy, alpha, tu, tv);
    if (chroma) {
      const at = row * cw + start;
      sampleChroma(this.#base, cw, this.#chromaHeight, this.#uOffset, this.#vOffset, sx, sy, n, out, at);
      if (shared) blendChroma(this.#base, cw, this.#chromaHeight, this.#uOffset, this.#vOffset, alpha, tu, tv, n, out, at);
    } else {
      const at = row * width + start;
      sampleLuma(this.#base, width, height, sx, sy, n, out, at);
      if (shared) blendLuma(this.#base, width, height, alpha, tu, tv, n, out, at);
    }
  }

  /** Row pieces of the head region where the weight is not 0, cut by kind; `step` 2 for chroma. */
  #cutRuns(step: number, kindAt: (x: number, y: number, weight: number) => number): Runs {
    const runs: number[] = [];
    for (let row = 0; row < this.#rh; row += step) {
      let open = -1;
      let openKind = -1;
      for (let col = 0; col <= this.#rw; col += step) {
        const weight = col < this.#rw ? this.#weight[row * this.#rw + col]! : 0;
        const kind = weight > 0 ? kindAt(this.#rx0 + col, this.#ry0 + row, weight) : -1;
        if (kind === openKind) continue;
        if (openKind >= 0) runs.push((this.#ry0 + row) / step, (this.#rx0 + open) / step, (this.#rx0 + col) / step, openKind);
        open = col;
        openKind = kind;
      }
    }
    return { list: Int32Array.from(runs), count: runs.length / 4 };
  }
}

interface HeadMotion {
  sin: number;
  c1: number;
  tx: number;
  ty: number;
  px: number;
  py: number;
}

const clamp = (value: number, min: number, max: number) => (value < min ? min : value > max ? max : value);

/**
 * Where each pixel of a run comes from under the head's motion: p − w(p)·((R − I)(p − pivot) + t),
 * the rigid motion faded by the weight. `start` is in the plane's pixels; results in luma pixels.
 */
function mapHead(head: HeadMotion, weight: Float32Array, weightRow: number, y: number, start: number, n: number, chroma: boolean, sx: Float32Array, sy: Float32Array): void {
  const { sin, c1, tx, ty, px, py } = head;
  const yr = y - py;
  const bx = -sin * yr + tx;
  const by = c1 * yr + ty;
  const step = chroma ? 2 : 1;
  const offset = chroma ? 0.5 : 0;
  for (let i = 0; i < n; i++) {
    const lumaX = (start + i) * step;
    const x = lumaX + offset;
    const w = weight[weightRow + lumaX]!;
    const xr = x - px;
    sx[i] = x - w * (c1 * xr + bx);
    sy[i] = y - w * (sin * xr + by);
  }
}

/**
 * A luma run that moves rigidly with the head (weight 1, most of the face and hair): an
 * affine map, so the source position only steps by a constant (16.16 fixed point) per pixel.
 */
function rigidLuma(head: HeadMotion, y: number, start: number, n: number, base: Uint8Array, width: number, height: number, out: Uint8Array): void {
  const { sin, c1, tx, ty, px, py } = head;
  const xr = start - px;
  const yr = y - py;
  let sx = ((start - (c1 * xr - sin * yr + tx)) * 65536) | 0;
  let sy = ((y - (sin * xr + c1 * yr + ty)) * 65536) | 0;
  const stepX = ((1 - c1) * 65536) | 0;
  const stepY = (-sin * 65536) | 0;
  const maxX = ((width - 2) << 8) | 255;
  const maxY = ((height - 2) << 8) | 255;
  const at = y * width;
  for (let x = start; x < start + n; x++) {
    let fx = sx >> 8;
    let fy = sy >> 8;
    sx += stepX;
    sy += stepY;
    fx = fx < 0 ? 0 : fx > maxX ? maxX : fx;
    fy = fy < 0 ? 0 : fy > maxY ? maxY : fy;
    const wx = fx & 255;
    const wy = fy & 255;
    const j = (fy >> 8) * width + (fx >> 8);
    const a = base[j]!;
    const c = base[j + width]!;
    const top = (a << 8) + (base[j + 1]! - a) * wx;
    const bottom = (c << 8) + (base[j + width + 1]! - c) * wx;
    out[at + x] = ((top << 8) + (bottom - top) * wy + 32768) >> 16;
  }
}

/** Both chroma planes of a rigid run; `row` and `start` in chroma pixels. */
function rigidChroma(head: HeadMotion, row: number, start: number, n: number, base: Uint8Array, cw: number, ch: number, uOffset: number, vOffset: number, out: Uint8Array): void {
  const { sin, c1, tx, ty, px, py } = head;
  // The first sample's centre in luma pixels, its source, then in chroma pixels (16.16).
  const x = 2 * start + 0.5;
  const y = 2 * row + 0.5;
  const xr = x - px;
  const yr = y - py;
  let sx = (((x - (c1 * xr - sin * yr + tx) - 0.5) / 2) * 65536) | 0;
  let sy = (((y - (sin * xr + c1 * yr + ty) - 0.5) / 2) * 65536) | 0;
  // One chroma pixel is two luma pixels: the source steps by the same amount in chroma pixels.
  const stepX = ((1 - c1) * 65536) | 0;
  const stepY = (-sin * 65536) | 0;
  const maxX = ((cw - 2) << 8) | 255;
  const maxY = ((ch - 2) << 8) | 255;
  const at = row * cw;
  for (let cx = start; cx < start + n; cx++) {
    let fx = sx >> 8;
    let fy = sy >> 8;
    sx += stepX;
    sy += stepY;
    fx = fx < 0 ? 0 : fx > maxX ? maxX : fx;
    fy = fy < 0 ? 0 : fy > maxY ? maxY : fy;
    const wx = fx & 255;
    const wy = fy & 255;
    const j = (fy >> 8) * cw + (fx >> 8);
    let k = uOffset + j;
    let a = base[k]!;
    let c = base[k + cw]!;
    let top = (a << 8) + (base[k + 1]! - a) * wx;
    let bottom = (c << 8) + (base[k + cw + 1]! - c) * wx;
    out[uOffset + at + cx] = ((top << 8) + (bottom - top) * wy + 32768) >> 16;
    k = vOffset + j;
    a = base[k]!;
    c = base[k + cw]!;
    top = (a << 8) + (base[k + 1]! - a) * wx;
    bottom = (c << 8) + (base[k + cw + 1]! - c) * wx;
    out[vOffset + at + cx] = ((top << 8) + (bottom - top) * wy + 32768) >> 16;
  }
}

/** A luma run moved by the head alone (mapHead and sampleLuma in one loop). */
function warpLuma(head: HeadMotion, weight: Float32Array, weightRow: number, y: number, start: number, n: number, base: Uint8Array, width: number, height: number, out: Uint8Array): void {
  const { sin, c1, tx, ty, px, py } = head;
  const yr = y - py;
  const bx = -sin * yr + tx;
  const by = c1 * yr + ty;
  const maxX = ((width - 2) << 8) | 255;
  const maxY = ((height - 2) << 8) | 255;
  const at = y * width;
  for (let x = start; x < start + n; x++) {
    const w = weight[weightRow + x]!;
    const xr = x - px;
    let fx = ((x - w * (c1 * xr + bx)) * 256) | 0;
    let fy = ((y - w * (sin * xr + by)) * 256) | 0;
    fx = fx < 0 ? 0 : fx > maxX ? maxX : fx;
    fy = fy < 0 ? 0 : fy > maxY ? maxY : fy;
    const wx = fx & 255;
    const wy = fy & 255;
    const j = (fy >> 8) * width + (fx >> 8);
    const a = base[j]!;
    const c = base[j + width]!;
    const top = (a << 8) + (base[j + 1]! - a) * wx;
    const bottom = (c << 8) + (base[j + width + 1]! - c) * wx;
    out[at + x] = ((top << 8) + (bottom - top) * wy + 32768) >> 16;
  }
}

/** A chroma run (both planes) moved by the head alone; `row` and `start` in chroma pixels. */
function warpChroma(
  head: HeadMotion,
  weight: Float32Array,
  weightRow: number,
  row: number,
  start: number,
  n: number,
  base: Uint8Array,
  cw: number,
  ch: number,
  uOffset: number,
  vOffset: number,
  out: Uint8Array,
): void {
  const { sin, c1, tx, ty, px, py } = head;
  // Chroma sample centres, in luma pixels.
  const y = 2 * row + 0.5;
  const yr = y - py;
  const bx = -sin * yr + tx;
  const by = c1 * yr + ty;
  const maxX = ((cw - 2) << 8) | 255;
  const maxY = ((ch - 2) << 8) | 255;
  const at = row * cw;
  for (let cx = start; cx < start + n; cx++) {
    const x = 2 * cx + 0.5;
    const w = weight[weightRow + 2 * cx]!;
    const xr = x - px;
    // To chroma pixels: (luma − 0.5) / 2, in 8-bit fixed point.
    let fx = ((x - w * (c1 * xr + bx) - 0.5) * 128) | 0;
    let fy = ((y - w * (sin * xr + by) - 0.5) * 128) | 0;
    fx = fx < 0 ? 0 : fx > maxX ? maxX : fx;
    fy = fy < 0 ? 0 : fy > maxY ? maxY : fy;
    const wx = fx & 255;
    const wy = fy & 255;
    const j = (fy >> 8) * cw + (fx >> 8);
    let k = uOffset + j;
    let a = base[k]!;
    let c = base[k + cw]!;
    let top = (a << 8) + (base[k + 1]! - a) * wx;
    let bottom = (c << 8) + (base[k + cw + 1]! - c) * wx;
    out[uOffset + at + cx] = ((top << 8) + (bottom - top) * wy + 32768) >> 16;
    k = vOffset + j;
    a = base[k]!;
    c = base[k + cw]!;
    top = (a << 8) + (base[k + 1]! - a) * wx;
    bottom = (c << 8) + (base[k + cw + 1]! - c) * wx;
    out[vOffset + at + cx] = ((top << 8) + (bottom - top) * wy + 32768) >> 16;
  }
}

/**
 * The mouth: the lower lip and jaw drop (most at the middle of the lips, the lens shape of
 * an open mouth; the whole chin below), the upper lip rises a little, the lips draw together
 * or spread; the gap between them shows the texture. True when some pixel shows it.
 */
function mapMouth(
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
  const { ox, oy, ax, ay, u0, columns, vMin, vMax, nose, blend, textureU, teeth } = m;
  const throatRows = textureRows - 1 - teeth;
  const { split: splitAt, lens: lensAt, lateral: lateralAt, fadeStart: fadeStartAt, fadeEnd: fadeEndAt, top: topAt, bottom: bottomAt, roundAcross, roundAlong } = m;
  const lift = open * UPPER_LIFT;
  const blendScale = 1 / blend;
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
    } else if (v < bottom) {
      // In the gap; whichever lip edge is nearer shows through the part of the pixel outside it.
      const split = splitAt[k0]! + (splitAt[k0 + 1]! - splitAt[k0]!) * f;
      sv = v - top < bottom - v ? split - 0.5 : split + 0.5;
    } else {
      // Lower lip, chin, jaw: the lens shape at the lip gives way to the jaw's below it.
      const lens = lensAt[k0]!;
      let t = (v - bottom) * blendScale;
      t = t > 1 ? 1 : t;
      const amount = open * (lens + (lateralAt[k0]! - lens) * t * t * (3 - 2 * t));
      sv = v - amount;
      const fadeStart = fadeStartAt[k0]!;
      if (sv > fadeStart) {
        // Under the chin the motion fades (the neck stays): solve v = s + amount·(1 − fade(s)) for s.
        const fadeScale = 1 / (fadeEndAt[k0]! - fadeStart);
        for (let step = 0; step < 2; step++) {
          let s = (sv - fadeStart) * fadeScale;
          s = s < 0 ? 0 : s > 1 ? 1 : s;
          sv = v - amount * (1 - s * s * (3 - 2 * s));
        }
      }
    }
    sx[i] = ox + u * ax - sv * ay;
    sy[i] = oy + u * ay + sv * ax;
    // The share of this pixel (one pixel tall) inside the gap: its edges are smooth.
    const covered = (v + 0.5 < bottom ? v + 0.5 : bottom) - (v - 0.5 > top ? v - 0.5 : top);
    if (covered > 0) {
      alpha[i] = covered > 1 ? 1 : covered;
      tu[i] = u - textureU;
      const depth = v - top;
      tv[i] = depth <= teeth ? depth : teeth + ((depth - teeth) * throatRows) / Math.max(1, bottom - top - teeth);
      textured = true;
    }
  }
  return textured;
}

/**
 * An eyelid: the skin between the crease and the lid's margin stretches down over the eye;
 * the margin itself (lashes) moves down unstretched, so it stays a crisp line. The pixel the
 * lid's edge crosses shows both, in proportion (tu, tv: where the eye is; alpha: its share).
 * True when some pixel is shared.
 */
function mapEye(eye: EyeTables, blink: number, n: number, sx: Float32Array, sy: Float32Array, alpha: Float32Array, tu: Float32Array, tv: Float32Array): boolean {
  const { ox, oy, ax, ay, u0, columns, vMin, vMax } = eye;
  const upperAt = eye.upper;
  const lowerAt = eye.lower;
  const creaseAt = eye.crease;
  let shared = false;
  for (let i = 0; i < n; i++) {
    alpha[i] = 0;
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
    const gap = lower - upper;
    if (gap <= 0) continue;
    // Closed, the lid edge passes the lower lid's edge by half a pixel (less toward the
    // corners, where the gap closes): no eye shows.
    const edge = upper + blink * (gap + (gap < 2 ? 0.25 * gap : 0.5));
    // The part of this pixel (one pixel tall) the lid covers.
    let lid = edge - (v - 0.5);
    if (v < crease || lid <= 0) continue;
    lid = lid > 1 ? 1 : lid;
    const margin = LASH_SHARE * (upper - crease);
    const at = v < edge ? v : edge;
    const sv =
      at < edge - margin
        ? crease + ((at - crease) * (upper - margin - crease)) / (edge - margin - crease)
        : at - (edge - upper);
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

// Samplers: bilinear in 8-bit fixed point (integer arithmetic is what the JIT does fastest).

function sampleLuma(base: Uint8Array, width: number, height: number, sx: Float32Array, sy: Float32Array, n: number, out: Uint8Array, at: number): void {
  const maxX = ((width - 2) << 8) | 255;
  const maxY = ((height - 2) << 8) | 255;
  for (let i = 0; i < n; i++) {
    let x = (sx[i]! * 256) | 0;
    let y = (sy[i]! * 256) | 0;
    x = x < 0 ? 0 : x > maxX ? maxX : x;
    y = y < 0 ? 0 : y > maxY ? maxY : y;
    const fx = x & 255;
    const fy = y & 255;
    const j = (y >> 8) * width + (x >> 8);
    const a = base[j]!;
    const c = base[j + width]!;
    const top = (a << 8) + (base[j + 1]! - a) * fx;
    const bottom = (c << 8) + (base[j + width + 1]! - c) * fx;
    out[at + i] = ((top << 8) + (bottom - top) * fy + 32768) >> 16;
  }
}

/** Both chroma planes, sampled at luma-pixel positions. */
function sampleChroma(base: Uint8Array, cw: number, ch: number, uOffset: number, vOffset: number, sx: Float32Array, sy: Float32Array, n: number, out: Uint8Array, at: number): void {
  const maxX = ((cw - 2) << 8) | 255;
  const maxY = ((ch - 2) << 8) | 255;
  for (let i = 0; i < n; i++) {
    let x = ((sx[i]! - 0.5) * 128) | 0;
    let y = ((sy[i]! - 0.5) * 128) | 0;
    x = x < 0 ? 0 : x > maxX ? maxX : x;
    y = y < 0 ? 0 : y > maxY ? maxY : y;
    const fx = x & 255;
    const fy = y & 255;
    const j = (y >> 8) * cw + (x >> 8);
    let k = uOffset + j;
    let a = base[k]!;
    let c = base[k + cw]!;
    let top = (a << 8) + (base[k + 1]! - a) * fx;
    let bottom = (c << 8) + (base[k + cw + 1]! - c) * fx;
    out[uOffset + at + i] = ((top << 8) + (bottom - top) * fy + 32768) >> 16;
    k = vOffset + j;
    a = base[k]!;
    c = base[k + cw]!;
    top = (a << 8) + (base[k + 1]! - a) * fx;
    bottom = (c << 8) + (base[k + cw + 1]! - c) * fx;
    out[vOffset + at + i] = ((top << 8) + (bottom - top) * fy + 32768) >> 16;
  }
}

/** Lays a second sample of the photo (at tu, tv) over a luma run where its share is not 0. */
function blendLuma(base: Uint8Array, width: number, height: number, alpha: Float32Array, tu: Float32Array, tv: Float32Array, n: number, out: Uint8Array, at: number): void {
  const maxX = width - 1.001;
  const maxY = height - 1.001;
  for (let i = 0; i < n; i++) {
    const share = alpha[i]!;
    if (share <= 0) continue;
    let x = tu[i]!;
    let y = tv[i]!;
    x = x < 0 ? 0 : x > maxX ? maxX : x;
    y = y < 0 ? 0 : y > maxY ? maxY : y;
    const value = bilinear(base, 0, width, x, y);
    const photo = out[at + i]!;
    out[at + i] = photo + (value - photo) * share + 0.5;
  }
}

/** The same over both chroma planes (tu, tv in luma pixels). */
function blendChroma(base: Uint8Array, cw: number, ch: number, uOffset: number, vOffset: number, alpha: Float32Array, tu: Float32Array, tv: Float32Array, n: number, out: Uint8Array, at: number): void {
  const maxX = cw - 1.001;
  const maxY = ch - 1.001;
  for (let i = 0; i < n; i++) {
    const share = alpha[i]!;
    if (share <= 0) continue;
    let x = (tu[i]! - 0.5) * 0.5;
    let y = (tv[i]! - 0.5) * 0.5;
    x = x < 0 ? 0 : x > maxX ? maxX : x;
    y = y < 0 ? 0 : y > maxY ? maxY : y;
    let photo = out[uOffset + at + i]!;
    out[uOffset + at + i] = photo + (bilinear(base, uOffset, cw, x, y) - photo) * share + 0.5;
    photo = out[vOffset + at + i]!;
    out[vOffset + at + i] = photo + (bilinear(base, vOffset, cw, x, y) - photo) * share + 0.5;
  }
}

function bilinear(plane: Uint8Array, offset: number, stride: number, x: number, y: number): number {
  const ix = x | 0;
  const iy = y | 0;
  const fx = x - ix;
  const fy = y - iy;
  const j = offset + iy * stride + ix;
  const a = plane[j]!;
  const c = plane[j + stride]!;
  const top = a + (plane[j + 1]! - a) * fx;
  return top + (c + (plane[j + stride + 1]! - c) * fx - top) * fy;
}

/** Lays the texture over a run where its share is not 0. */
function blendTexture(plane: Float32Array, texture: Texture, alpha: Float32Array, tu: Float32Array, tv: Float32Array, n: number, out: Uint8Array, at: number): void {
  const tw = texture.width;
  const maxX = tw - 1.001;
  const maxY = texture.height - 1.001;
  for (let i = 0; i < n; i++) {
    const share = alpha[i]!;
    if (share <= 0) continue;
    let x = tu[i]!;
    let y = tv[i]!;
    x = x < 0 ? 0 : x > maxX ? maxX : x;
    y = y < 0 ? 0 : y > maxY ? maxY : y;
    const ix = x | 0;
    const iy = y | 0;
    const fx = x - ix;
    const fy = y - iy;
    const j = iy * tw + ix;
    const a = plane[j]!;
    const b = plane[j + 1]!;
    const c = plane[j + tw]!;
    const d = plane[j + tw + 1]!;
    const top = a + (b - a) * fx;
    const value = top + (c + (d - c) * fx - top) * fy;
    const photo = out[at + i]!;
    out[at + i] = photo + (value - photo) * share + 0.5;
  }
}

function mouthTables(rig: FaceRig): MouthTables {
  const mouth = rig.mouth;
  const [left, right] = mouth.corners;
  // The jaw moves less toward the face's sides and not at all from 70 % of the way there.
  const jawLeft = JAW_REACH * Math.min(mouth.jaw[0]![0], left * 1.5);
  const jawRight = JAW_REACH * Math.max(mouth.jaw[mouth.jaw.length - 1]![0], right * 1.5);
  const chin = interpolate(mouth.jaw, 0);
  // Long enough that the chin never folds over the neck: the fade's slope × the drop stays below 1.
  const span = Math.max(0.3 * chin, 1.6 * mouth.maxOpen);
  const halfWidth = (right - left) / 2;
  const u0 = Math.floor(jawLeft) - 2;
  const columns = Math.ceil(jawRight) + 3 - u0;
  const split = new Float32Array(columns);
  const lens = new Float32Array(columns);
  const lateral = new Float32Array(columns);
  const fadeStart = new Float32Array(columns);
  const fadeEnd = new Float32Array(columns);
  const roundAcross = new Float32Array(columns);
  let deepest = 0;
  for (let k = 0; k < columns; k++) {
    const u = u0 + k;
    split[k] = interpolate(mouth.split, u);
    const corner = u < 0 ? left : right;
    const across = u / corner;
    lens[k] = across >= 1 ? 0 : 1 - across * across;
    const side = u < 0 ? jawLeft : jawRight;
    lateral[k] = 1 - smoothstep(0.9 * Math.abs(corner), Math.abs(side), Math.abs(u));
    const jaw = interpolate(mouth.jaw, u);
    fadeStart[k] = jaw - 0.1 * chin;
    fadeEnd[k] = jaw + span;
    deepest = Math.max(deepest, jaw + span);
    roundAcross[k] = 1 - smoothstep(0.7 * halfWidth, 1.7 * halfWidth, Math.abs(u));
  }
  const vMin = Math.floor(mouth.nose) - 1;
  const vMax = Math.ceil(deepest) + 2;
  const roundAlong = new Float32Array(vMax - vMin + 1);
  for (let j = 0; j < roundAlong.length; j++) roundAlong[j] = 1 - smoothstep(0, 0.8 * chin, Math.abs(vMin + j));
  const box = boundingBox(mouth, u0, u0 + columns - 1, vMin, vMax, rig.width, rig.height);
  return {
    ox: mouth.origin[0],
    oy: mouth.origin[1],
    ax: mouth.axis[0],
    ay: mouth.axis[1],
    u0,
    columns,
    vMin,
    vMax,
    ...box,
    split,
    lens,
    lateral,
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
    top: new Float32Array(columns),
    bottom: new Float32Array(columns),
  };
}

function eyeTables(eye: FaceRig['eyes'][number], width: number, height: number): EyeTables {
  const u0 = Math.floor(eye.corners[0]) - 2;
  const columns = Math.ceil(eye.corners[1]) + 3 - u0;
  const upper = new Float32Array(columns);
  const lower = new Float32Array(columns);
  const crease = new Float32Array(columns);
  let vMin = Infinity;
  let vMax = -Infinity;
  for (let k = 0; k < columns; k++) {
    const u = u0 + k;
    const inside = u > eye.corners[0] && u < eye.corners[1];
    upper[k] = interpolate(eye.upper, u);
    // Beyond the corners the lids meet: nothing to close.
    lower[k] = inside ? Math.max(upper[k]!, interpolate(eye.lower, u)) : upper[k]!;
    crease[k] = interpolate(eye.crease, u);
    vMin = Math.min(vMin, crease[k]!);
    vMax = Math.max(vMax, lower[k]! + 1);
  }
  vMin -= 1;
  return { ox: eye.origin[0], oy: eye.origin[1], ax: eye.axis[0], ay: eye.axis[1], u0, columns, vMin, vMax, ...boundingBox(eye, u0, u0 + columns - 1, vMin, vMax, width, height), upper, lower, crease };
}

/** The image-space box (clamped to the frame) around a local box. */
function boundingBox(frame: LocalFrame, uMin: number, uMax: number, vMin: number, vMax: number, width: number, height: number) {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const u of [uMin, uMax]) {
    for (const v of [vMin, vMax]) {
      xs.push(frame.origin[0] + u * frame.axis[0] - v * frame.axis[1]);
      ys.push(frame.origin[1] + u * frame.axis[1] + v * frame.axis[0]);
    }
  }
  return {
    x0: Math.max(0, Math.floor(Math.min(...xs))),
    y0: Math.max(0, Math.floor(Math.min(...ys))),
    x1: Math.min(width, Math.ceil(Math.max(...xs)) + 1),
    y1: Math.min(height, Math.ceil(Math.max(...ys)) + 1),
  };
}

/** BT.601 limited range, as libyuv (and so the encoder's input) uses. */
export function rgbToYuv(r: number, g: number, b: number): [number, number, number] {
  return [
    (66 * r + 129 * g + 25 * b + 0x1080) / 256,
    (112 * b - 74 * g - 38 * r + 0x8080) / 256,
    (112 * r - 94 * g - 18 * b + 0x8080) / 256,
  ];
}

function texturePlanes(image: RgbaImage): Texture {
  const n = image.width * image.height;
  const y = new Float32Array(n);
  const u = new Float32Array(n);
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const [ly, cu, cv] = rgbToYuv(image.rgba[4 * i]!, image.rgba[4 * i + 1]!, image.rgba[4 * i + 2]!);
    y[i] = ly;
    u[i] = cu;
    v[i] = cv;
  }
  return { width: image.width, height: image.height, y, u, v };
}
