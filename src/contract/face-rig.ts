// The built-in pipeline's face rig: what its training (src/pipelines/builtin/face-rig.ts)
// measures once on the framing, stored as JSON beside the framing and the mouth texture, and
// what its renderer (agent/pipelines/builtin) warps by. Geometry lives in small local frames
// (mouth, each eye, the head), as polylines over the lips, lids and jaw. This file is the
// format both halves read: its types, version, asset names, and how its frames are read.
import type { AvatarShape } from './avatar-video.ts';

/** Bumped when the JSON changes incompatibly; the renderer refuses other versions (and streams the stand-in). */
export const FACE_RIG_VERSION = 1;

/** The training's files for one shape, by name in the identity's `assets` (dispatch `identity.assets`). */
export function builtinAssetNames(shape: AvatarShape) {
  return { image: `${shape}.image`, rig: `${shape}.rig`, mouth: builtinTextureName(shape, 'mouth') };
}

/** A texture the training made for the renderer (`mouth`: the cavity and teeth). */
export function builtinTextureName(shape: AvatarShape, texture: string): string {
  return `${shape}.texture.${texture}`;
}

export type Point = [number, number];

/** A face-aligned frame: u runs along `axis` (image right for an upright face), v perpendicular to it (down). */
export interface LocalFrame {
  origin: Point;
  /** Unit vector. */
  axis: Point;
}

export interface HeadRig extends LocalFrame {
  /** Half-axes (u, v) of the ellipse that moves rigidly with the head: face and hair. */
  radii: Point;
  /** The motion fades to nothing at `fade` × the radii: neck, shoulders and background stay. */
  fade: number;
  /** Where the head turns: the top of the neck. */
  pivot: Point;
  /** Forehead to chin, px: idle motion is scaled by it. */
  faceHeight: number;
}

export interface MouthRig extends LocalFrame {
  /** u of the left and right mouth corners. */
  corners: Point;
  /** Where the lips part (the top edge of the lower lip), [u, v] sorted by u, corner to corner. */
  split: Point[];
  /** v of the bottom of the nose: the upper lip's lift fades out there. */
  nose: number;
  /** The lower face outline (jaw and chin), [u, v] sorted by u: what opening the mouth moves. */
  jaw: Point[];
  /** How far the lower lip drops at full openness, px. */
  maxOpen: number;
  /**
   * Rows of teeth at the top of the texture (0 when the photo shows its own): they stay
   * under the upper lip, the rest of the texture (throat to tongue) spans what is left of the gap.
   */
  teeth: number;
  /**
   * Rows of lower teeth at the bottom of the texture (biting edge first): they rise from
   * behind the lower lip as the jaw opens wide. Absent in rigs trained before they existed.
   */
  lowerTeeth?: number;
  /**
   * The upper lip's inner edge, [u, v] sorted by u, when the photo shows the mouth's inside
   * (parted lips, teeth): pressing the lips together (m, b, p) closes the gap between it and
   * `split`. Absent when the photo's lips are closed, and in rigs trained before it existed.
   */
  inner?: Point[];
  /** The `mouth` texture's column 0 sits at this u; its row 0 at the cavity's top edge. */
  textureU: number;
}

export interface EyeRig extends LocalFrame {
  /** u of the two eye corners. */
  corners: Point;
  /** Upper lid edge, [u, v] sorted by u. */
  upper: Point[];
  /** Lower lid edge. */
  lower: Point[];
  /** The top of the lid skin that stretches down over the eye in a blink (below the brow). */
  crease: Point[];
}

export interface FaceRig {
  version: typeof FACE_RIG_VERSION;
  width: number;
  height: number;
  head: HeadRig;
  mouth: MouthRig;
  eyes: EyeRig[];
}

export interface RgbaImage {
  width: number;
  height: number;
  rgba: Uint8Array;
}

/** The upper lip rises by this share of the lower lip's drop: the texture's teeth (training) and the warp (rendering) both follow it. */
export const UPPER_LIFT = 0.12;

// Reading the rig's local frames and polylines.

export function toLocal(frame: LocalFrame, [x, y]: Point): Point {
  const dx = x - frame.origin[0];
  const dy = y - frame.origin[1];
  const [ax, ay] = frame.axis;
  return [dx * ax + dy * ay, -dx * ay + dy * ax];
}

export function toImage(frame: LocalFrame, [u, v]: Point): Point {
  const [ax, ay] = frame.axis;
  return [frame.origin[0] + u * ax - v * ay, frame.origin[1] + u * ay + v * ax];
}

/** Linear interpolation along a polyline sorted by u, held flat beyond its ends. */
export function interpolate(line: Point[], u: number): number {
  const first = line[0]!;
  const last = line[line.length - 1]!;
  if (u <= first[0]) return first[1];
  if (u >= last[0]) return last[1];
  for (let i = 1; i < line.length; i++) {
    const b = line[i]!;
    if (u <= b[0]) {
      const a = line[i - 1]!;
      const t = b[0] > a[0] ? (u - a[0]) / (b[0] - a[0]) : 0;
      return a[1] + (b[1] - a[1]) * t;
    }
  }
  return last[1];
}

export function smoothstep(edge0: number, edge1: number, x: number): number {
  const t = Math.max(0, Math.min(1, (x - edge0) / (edge1 - edge0)));
  return t * t * (3 - 2 * t);
}
