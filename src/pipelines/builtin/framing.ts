// The photo cropped and scaled into the avatar's frame, once per shape, at training: the
// face placed the same way whatever the photo (eyes level, at 40 % of the height, forehead
// to chin 35 % of it, centred), and where the photo does not reach the frame's edge, laid on
// a blurred, darkened copy of itself (backdrop.ts) rather than black bars or smeared edges.
import { AVATAR_FRAME_SIZES, type AvatarShape } from '../../contract/index.ts';
import type { InspectedImage } from '../../media/index.ts';
import { fillBeyondPhoto } from './backdrop.ts';
import { type FoundFace, type Point, photoPixels } from './face-detection.ts';

export interface Framing {
  shape: AvatarShape;
  width: number;
  height: number;
  /** 8-bit RGB, width × height × 3 bytes. */
  rgb: Uint8Array;
  /** The face's 478 landmarks in the framing's pixels. */
  landmarks: Point[];
  /** Whether part of the frame lies beyond the photo and shows the backdrop. */
  extended: boolean;
}

/** The eye line's height in the frame, from the top: the classic head-and-shoulders shot. */
export const EYE_LINE = 0.4;
/** Forehead (FaceMesh point 10) to chin (point 152), as a share of the frame height. */
export const FACE_HEIGHT_SHARE = 0.35;
/** A head tilted less than this stays as photographed (a copy, no resampling); more is levelled. */
export const LEVEL_BELOW_DEGREES = 3;

// FaceMesh points (the canonical MediaPipe topology).
const FOREHEAD = 10;
const CHIN = 152;
const OUTER_EYE_CORNERS = [33, 263] as const;

/** A similarity map from the photo to the frame (rotation levels the eyes, then scale, then shift). */
interface Placement {
  eyeMid: Point;
  cos: number;
  sin: number;
  scaleX: number;
  scaleY: number;
  shiftX: number;
  shiftY: number;
}

function toFrame(p: Point, m: Placement): Point {
  const dx = p[0] - m.eyeMid[0];
  const dy = p[1] - m.eyeMid[1];
  return [m.scaleX * (m.cos * dx + m.sin * dy) + m.shiftX, m.scaleY * (-m.sin * dx + m.cos * dy) + m.shiftY];
}

function toPhoto(f: Point, m: Placement): Point {
  const rx = (f[0] - m.shiftX) / m.scaleX;
  const ry = (f[1] - m.shiftY) / m.scaleY;
  return [m.eyeMid[0] + m.cos * rx - m.sin * ry, m.eyeMid[1] + m.sin * rx + m.cos * ry];
}

/** The photo framed for one shape, with the face's landmarks moved into the frame. */
export async function frameFace(image: InspectedImage, face: FoundFace, shape: AvatarShape): Promise<Framing> {
  const { width, height } = AVATAR_FRAME_SIZES[shape];
  const marks = face.landmarks;
  const [left, right] = OUTER_EYE_CORNERS.map((i) => marks[i]!) as [Point, Point];
  const eyeMid: Point = [(left[0] + right[0]) / 2, (left[1] + right[1]) / 2];
  let roll = Math.atan2(right[1] - left[1], right[0] - left[0]);
  if (Math.abs(roll) < (LEVEL_BELOW_DEGREES * Math.PI) / 180) roll = 0;
  const cos = Math.cos(roll);
  const sin = Math.sin(roll);

  // Measured in the levelled face, relative to the eye midpoint, before scaling.
  const level = (p: Point): Point => {
    const dx = p[0] - eyeMid[0];
    const dy = p[1] - eyeMid[1];
    return [cos * dx + sin * dy, -sin * dx + cos * dy];
  };
  const faceHeight = Math.abs(level(marks[CHIN]!)[1] - level(marks[FOREHEAD]!)[1]);
  const xs = marks.map((p) => level(p)[0]);
  const faceCentreX = (Math.min(...xs) + Math.max(...xs)) / 2;
  const scale = (FACE_HEIGHT_SHARE * height) / Math.max(faceHeight, 1);
  const draft: Placement = {
    eyeMid,
    cos,
    sin,
    scaleX: scale,
    scaleY: scale,
    shiftX: width / 2 - scale * faceCentreX,
    shiftY: EYE_LINE * height,
  };

  // Only the part of the photo the frame shows is scaled (sharp, lanczos): 2 px of margin for
  // the bilinear sampler, clipped to the photo.
  const corners = (
    [
      [0, 0],
      [width, 0],
      [0, height],
      [width, height],
    ] as Point[]
  ).map((c) => toPhoto(c, draft));
  const x0 = clamp(Math.floor(Math.min(...corners.map((c) => c[0])) - 2), 0, image.width - 1);
  const y0 = clamp(Math.floor(Math.min(...corners.map((c) => c[1])) - 2), 0, image.height - 1);
  const x1 = clamp(Math.ceil(Math.max(...corners.map((c) => c[0])) + 2), x0 + 1, image.width);
  const y1 = clamp(Math.ceil(Math.max(...corners.map((c) => c[1])) + 2), y0 + 1, image.height);
  const regionWidth = Math.max(1, Math.round((x1 - x0) * scale));
  const regionHeight = Math.max(1, Math.round((y1 - y0) * scale));
  const region = await photoPixels(image)
    .extract({ left: x0, top: y0, width: x1 - x0, height: y1 - y0 })
    .resize(regionWidth, regionHeight, { fit: 'fill', kernel: 'lanczos3' })
    .removeAlpha()
    .raw()
    .toBuffer();

  // The exact scale the region got (whole pixels), so an unrotated frame is a plain copy of it.
  const placement: Placement = { ...draft, scaleX: regionWidth / (x1 - x0), scaleY: regionHeight / (y1 - y0) };
  placement.shiftX = width / 2 - placement.scaleX * faceCentreX;
  if (roll === 0) {
    // Whole-pixel offset between region and frame: no interpolation, no softening.
    const offsetX = placement.scaleX * (x0 - eyeMid[0]) + placement.shiftX;
    const offsetY = placement.scaleY * (y0 - eyeMid[1]) + placement.shiftY;
    placement.shiftX += Math.round(offsetX) - offsetX;
    placement.shiftY += Math.round(offsetY) - offsetY;
  }

  const geometry: SampleGeometry = { regionWidth, regionHeight, regionX: x0, regionY: y0, width, height, placement };
  const pixels = new Uint8Array(region.buffer, region.byteOffset, region.byteLength);
  const { rgb, outside, extended } = roll === 0 ? copyFrame(pixels, geometry) : sampleFrame(pixels, geometry);
  const finished = extended ? await fillBeyondPhoto(rgb, outside, width, height) : rgb;
  return { shape, width, height, rgb: finished, landmarks: marks.map((p) => round2(toFrame(p, placement))), extended };
}

interface SampleGeometry {
  regionWidth: number;
  regionHeight: number;
  regionX: number;
  regionY: number;
  width: number;
  height: number;
  placement: Placement;
}

interface Sampled {
  rgb: Uint8Array;
  /** Per frame pixel, how far (frame pixels) its centre lies beyond the photo's edge; negative on it. */
  outside: Float32Array;
  /** Whether any pixel lies beyond the photo. */
  extended: boolean;
}

/**
 * Signed distance from region pixel index (u, v) to the region's edge: positive outside,
 * round past its corners (the backdrop's shading follows it, and square corners drew mitres).
 */
function beyondEdge(u: number, v: number, rw: number, rh: number): number {
  const du = Math.max(-0.5 - u, u - (rw - 0.5));
  const dv = Math.max(-0.5 - v, v - (rh - 0.5));
  return du > 0 && dv > 0 ? Math.sqrt(du * du + dv * dv) : Math.max(du, dv);
}

/**
 * The unrotated case: the scaled region sits at a whole-pixel offset in the frame, so rows
 * are copied, and beyond the region each row continues with its edge pixel (as the sampler
 * below would clamp; the backdrop covers them).
 */
function copyFrame(region: Uint8Array, g: SampleGeometry): Sampled {
  const { regionWidth: rw, regionHeight: rh, width, height } = g;
  const [u0, v0] = regionCoordinate([0.5, 0.5], g).map(Math.round) as [number, number];
  const rgb = new Uint8Array(width * height * 3);
  const outside = new Float32Array(width * height);
  // Frame columns [left, right) and rows [top, bottom) lie on the region.
  const left = clamp(-u0, 0, width);
  const right = clamp(rw - u0, left, width);
  const top = clamp(-v0, 0, height);
  const bottom = clamp(rh - v0, top, height);
  for (let y = 0; y < height; y++) {
    const v = clamp(y + v0, 0, rh - 1);
    const row = y * width * 3;
    if (right > left) {
      rgb.set(region.subarray((v * rw + left + u0) * 3, (v * rw + right + u0) * 3), row + left * 3);
      for (let x = 0; x < left; x++) rgb.copyWithin(row + x * 3, row + left * 3, row + left * 3 + 3);
      for (let x = right; x < width; x++) rgb.copyWithin(row + x * 3, row + (right - 1) * 3, row + right * 3);
    } else {
      // The region lies wholly beside the frame (never with a face in it): its nearest column.
      for (let x = 0; x < width; x++) {
        const from = (v * rw + clamp(x + u0, 0, rw - 1)) * 3;
        rgb.set(region.subarray(from, from + 3), row + x * 3);
      }
    }
    for (let x = 0; x < width; x++) outside[y * width + x] = beyondEdge(x + u0, y + v0, rw, rh);
  }
  const extended = left > 0 || right < width || top > 0 || bottom < height;
  return { rgb, outside, extended };
}

/**
 * Bilinear resampling of the scaled region into the frame, clamped at the region's edges
 * (so the area beyond the photo starts as its edge pixels, smeared outwards, until the
 * backdrop covers it). `outside` tells the frame pixels on the photo from those beyond it.
 */
function sampleFrame(region: Uint8Array, g: SampleGeometry): Sampled {
  const { regionWidth: rw, regionHeight: rh, width, height } = g;
  const rgb = new Uint8Array(width * height * 3);
  const outside = new Float32Array(width * height);
  // Frame pixel centre → region pixel index, an affine map: u = ax·x + bx·y + cx.
  const origin = regionCoordinate([0.5, 0.5], g);
  const stepX = regionCoordinate([1.5, 0.5], g);
  const stepY = regionCoordinate([0.5, 1.5], g);
  const ax = stepX[0] - origin[0];
  const ay = stepX[1] - origin[1];
  const bx = stepY[0] - origin[0];
  const by = stepY[1] - origin[1];
  let extended = false;
  for (let y = 0; y < height; y++) {
    let u = origin[0] + bx * y;
    let v = origin[1] + by * y;
    for (let x = 0; x < width; x++, u += ax, v += ay) {
      const i = y * width + x;
      // Region pixels are frame-sized, so this is a distance in frame pixels too.
      outside[i] = beyondEdge(u, v, rw, rh);
      if (outside[i]! > 0) extended = true;
      const uc = u < 0 ? 0 : u > rw - 1 ? rw - 1 : u;
      const vc = v < 0 ? 0 : v > rh - 1 ? rh - 1 : v;
      const u0 = Math.floor(uc);
      const v0 = Math.floor(vc);
      const u1 = u0 + 1 < rw ? u0 + 1 : u0;
      const v1 = v0 + 1 < rh ? v0 + 1 : v0;
      const fu = uc - u0;
      const fv = vc - v0;
      const p00 = (v0 * rw + u0) * 3;
      const p01 = (v0 * rw + u1) * 3;
      const p10 = (v1 * rw + u0) * 3;
      const p11 = (v1 * rw + u1) * 3;
      const o = i * 3;
      for (let c = 0; c < 3; c++) {
        const top = region[p00 + c]! + (region[p01 + c]! - region[p00 + c]!) * fu;
        const bottom = region[p10 + c]! + (region[p11 + c]! - region[p10 + c]!) * fu;
        rgb[o + c] = top + (bottom - top) * fv + 0.5;
      }
    }
  }
  return { rgb, outside, extended };
}

/** Where a frame point falls in the scaled region, as a pixel index (centres at whole numbers). */
function regionCoordinate(frame: Point, g: SampleGeometry): Point {
  const p = toPhoto(frame, g.placement);
  return [(p[0] - g.regionX) * g.placement.scaleX - 0.5, (p[1] - g.regionY) * g.placement.scaleY - 0.5];
}

/** A framing's pixels as the renderer's rig builder takes them: RGBA, fully opaque. */
export function opaqueRgba(rgb: Uint8Array): Uint8Array {
  const rgba = new Uint8Array((rgb.length / 3) * 4);
  for (let i = 0, o = 0; i < rgb.length; i += 3, o += 4) {
    rgba[o] = rgb[i]!;
    rgba[o + 1] = rgb[i + 1]!;
    rgba[o + 2] = rgb[i + 2]!;
    rgba[o + 3] = 255;
  }
  return rgba;
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(Math.max(value, low), high);
}

function round2(p: Point): Point {
  return [Math.round(p[0] * 100) / 100, Math.round(p[1] * 100) / 100];
}
