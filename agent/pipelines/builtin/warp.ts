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
//
// This file draws each frame; the region and its runs are laid out in warp-runs.ts, the maps
// are in head-warp.ts, mouth.ts and eyes.ts, the photo is read in sampling.ts.

import type { FaceRig, RgbaImage } from '../../../src/contract/face-rig.ts';
import type { ColumnFrame } from './column-frame.ts';
import { type EyeTables, eyeTables, mapEye } from './eyes.ts';
import { type HeadWarp, mapHead, rigidChroma, rigidLuma, warpChroma, warpLuma } from './head-warp.ts';
import { type MouthTables, mapMouth, mouthTables, poseMouth } from './mouth.ts';
import { shadeMouthTexture } from './mouth-texture.ts';
import type { FacePose } from './pose.ts';
import {
  blendChroma,
  blendLuma,
  blendTexture,
  sampleChroma,
  sampleLuma,
  type Texture,
  texturePlanes,
} from './sampling.ts';
import { EYE, FADING, headRegion, MOUTH, MOUTH_OR_EYE, RIGID, type Runs } from './warp-runs.ts';

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
/** The gaze's bound (a share of the eye's half-width), and its smallest redrawn step. */
const MAX_GAZE = 0.3;
const GAZE_STEP_PX = 0.3;

export function i420Length(width: number, height: number): number {
  return width * height + 2 * ((width + 1) >> 1) * ((height + 1) >> 1);
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
  /** The larger eye's half-width and brow lift (px): the gaze's and brows' steps are measured on them. */
  readonly #eyeHalfWidth: number;
  readonly #maxBrowLift: number;
  /** The mouth, then the eyes. */
  readonly #locals: ColumnFrame[];
  /** The head's motion as drawn (updated in place, no allocation per frame). */
  readonly #head: HeadWarp;
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
  readonly #drawn = { valid: false, tx: 0, ty: 0, roll: 0, open: 0, round: 0, press: 0, blink: 0, gaze: 0, brow: 0 };

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

    this.#mouth = mouthTables(rig);
    this.#eyes = rig.eyes.map((eye) => eyeTables(eye, width, height));
    this.#texture =
      mouthTexture && shadeMouthTexture(texturePlanes(mouthTexture), rig.mouth.teeth, rig.mouth.lowerTeeth ?? 0);
    this.#locals = [this.#mouth, ...this.#eyes];
    this.#eyeHalfWidth = Math.max(...this.#eyes.map((eye) => eye.halfWidth));
    this.#maxBrowLift = Math.max(...this.#eyes.map((eye) => eye.maxBrowLift));

    // Where the head's motion may bring a local region's pixels from: its box, widened.
    const reaches = this.#locals.map((local) =>
      Math.max(
        ...[local.x0, local.x1].flatMap((x) =>
          [local.y0, local.y1].map((y) => Math.hypot(x - this.#pivotX, y - this.#pivotY)),
        ),
      ),
    );
    this.#localReach = Float64Array.from(reaches);
    this.#localBox = new Int32Array(4 * reaches.length);
    const region = headRegion(
      rig,
      this.#locals,
      Math.ceil(this.#maxShift * Math.SQRT2 + MAX_ROLL * Math.max(...reaches)) + 2,
    );
    this.#rx0 = region.x0;
    this.#ry0 = region.y0;
    this.#rw = region.width;
    this.#rh = region.height;
    this.#weight = region.weight;
    this.#reach = region.reach;
    this.#lumaRuns = region.lumaRuns;
    this.#chromaRuns = region.chromaRuns;
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
  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a frame's redraw: which region moved decides which pixel loops run, inlined for the hot path (bench/renderer)
  render(pose: FacePose, out: Uint8Array): void {
    const mouth = this.#mouth;
    const open = clamp(pose.open, 0, 1) * mouth.maxOpen;
    // Opening draws the corners in a little too.
    const round = clamp(pose.round, -0.2, 0.2) + 0.06 * clamp(pose.open, 0, 1);
    // Pressing needs the photo's open lips, and gives way to any opening.
    const press = mouth.inner && open === 0 ? clamp(pose.press, 0, 1) : 0;
    const blink = clamp(pose.blink, 0, 1);
    const roll = clamp(pose.roll, -MAX_ROLL, MAX_ROLL);
    const tx = clamp(pose.dx, -this.#maxShift, this.#maxShift);
    const ty = clamp(pose.dy, -this.#maxShift, this.#maxShift);
    const drawn = this.#drawn;
    const headMoved =
      !drawn.valid ||
      Math.hypot(tx - drawn.tx, ty - drawn.ty) + Math.abs(roll - drawn.roll) * this.#reach >= HEAD_STEP_PX;
    // Lips too are redrawn once they moved by a step too small to see, and always when they close.
    const mouthChanged =
      (open === 0) !== (drawn.open === 0) ||
      (press === 0) !== (drawn.press === 0) ||
      Math.abs(open - drawn.open) >= LIP_STEP_PX ||
      Math.abs(press - drawn.press) * mouth.maxOpen >= LIP_STEP_PX ||
      Math.abs(round - drawn.round) * mouth.halfWidth >= LIP_STEP_PX;
    const gaze = clamp(pose.gaze, -MAX_GAZE, MAX_GAZE);
    // The eyes are redrawn when the lids moved, or the gaze by a visible step.
    const brow = clamp(pose.brow, 0, 1);
    const eyesChanged =
      blink !== drawn.blink ||
      (brow === 0) !== (drawn.brow === 0) ||
      Math.abs(gaze - drawn.gaze) * this.#eyeHalfWidth >= GAZE_STEP_PX ||
      Math.abs(brow - drawn.brow) * this.#maxBrowLift >= GAZE_STEP_PX;
    if (!headMoved && !mouthChanged && !eyesChanged) return;
    if (headMoved) {
      drawn.tx = tx;
      drawn.ty = ty;
      drawn.roll = roll;
    }
    if (mouthChanged) {
      drawn.open = open;
      drawn.round = round;
      drawn.press = press;
    }
    drawn.valid = true;
    drawn.blink = blink;
    if (eyesChanged) {
      drawn.gaze = gaze;
      drawn.brow = brow;
      for (const eye of this.#eyes) {
        eye.gazeU = gaze * eye.halfWidth;
        eye.browLift = brow * eye.maxBrowLift;
      }
    }
    const head = this.#head;
    head.sin = Math.sin(drawn.roll);
    head.c1 = Math.cos(drawn.roll) - 1;
    head.tx = drawn.tx;
    head.ty = drawn.ty;
    const mouthOn = poseMouth(mouth, drawn.open, drawn.round, drawn.press);
    const eyesOn = blink > 0.01 || drawn.gaze !== 0 || drawn.brow !== 0;

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
        const row = list[4 * r]!;
        const start = list[4 * r + 1]!;
        const end = list[4 * r + 2]!;
        let kind = list[4 * r + 3]!;
        if (kind >= MOUTH_OR_EYE)
          kind = this.#nearer(kind - MOUTH_OR_EYE, chroma ? start + end : (start + end) / 2, chroma ? 2 * row : row);
        if (kind === RIGID) {
          if (headMoved) {
            if (chroma)
              rigidChroma(
                head,
                row,
                start,
                end - start,
                this.#base,
                this.#chromaWidth,
                this.#chromaHeight,
                this.#uOffset,
                this.#vOffset,
                out,
              );
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

  /** MOUTH, or EYE + `eye`: the region whose box, moved with the head as drawn, is nearer to (x, y) (luma pixels). */
  #nearer(eye: number, x: number, y: number): number {
    const { tx, ty } = this.#drawn;
    const outside = (box: ColumnFrame) =>
      Math.hypot(Math.max(box.x0 + tx - x, 0, x - (box.x1 + tx)), Math.max(box.y0 + ty - y, 0, y - (box.y1 + ty)));
    return outside(this.#eyes[eye]!) < outside(this.#mouth) ? EYE + eye : MOUTH;
  }

  /** Pixels [start, end) of a row (in the plane's pixels) moved by the head alone. */
  #fading(chroma: boolean, row: number, start: number, end: number, out: Uint8Array): void {
    const weightRow = ((chroma ? 2 * row : row) - this.#ry0) * this.#rw - this.#rx0;
    if (chroma)
      warpChroma(
        this.#head,
        this.#weight,
        weightRow,
        row,
        start,
        end - start,
        this.#base,
        this.#chromaWidth,
        this.#chromaHeight,
        this.#uOffset,
        this.#vOffset,
        out,
      );
    else
      warpLuma(this.#head, this.#weight, weightRow, row, start, end - start, this.#base, this.width, this.height, out);
  }

  /** Pixels [start, end) of a row moved by the head, then by the mouth or an eye. */
  #local(
    kind: number,
    chroma: boolean,
    row: number,
    start: number,
    end: number,
    open: number,
    round: number,
    blink: number,
    out: Uint8Array,
  ): void {
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
      const textured =
        mapMouth(this.#mouth, open, round, texture ? texture.height : 1, n, sx, sy, alpha, tu, tv) && texture;
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
    // Both eyes' maps: with the head's margins their runs' boxes overlap between the eyes,
    // where a brow's lift must not stop at the other eye's box.
    alpha.fill(0, 0, n);
    let shared = false;
    for (const eye of this.#eyes) shared = mapEye(eye, blink, n, sx, sy, alpha, tu, tv) || shared;
    if (chroma) {
      const at = row * cw + start;
      sampleChroma(this.#base, cw, this.#chromaHeight, this.#uOffset, this.#vOffset, sx, sy, n, out, at);
      if (shared)
        blendChroma(this.#base, cw, this.#chromaHeight, this.#uOffset, this.#vOffset, alpha, tu, tv, n, out, at);
    } else {
      const at = row * width + start;
      sampleLuma(this.#base, width, height, sx, sy, n, out, at);
      if (shared) blendLuma(this.#base, width, height, alpha, tu, tv, n, out, at);
    }
  }
}

const clamp = (value: number, min: number, max: number) => (value < min ? min : value > max ? max : value);
