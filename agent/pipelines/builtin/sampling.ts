// Reading the photo (and the mouth texture) at the positions the maps computed, into the I420
// frame: bilinear, in 8-bit fixed point where the photo is read.
import type { RgbaImage } from '../../../src/contract/face-rig.ts';

export interface Texture {
  width: number;
  height: number;
  /** Full-resolution Y, U and V. */
  y: Float32Array;
  u: Float32Array;
  v: Float32Array;
}

// Integer arithmetic is what the JIT does fastest.

export function sampleLuma(
  base: Uint8Array,
  width: number,
  height: number,
  sx: Float32Array,
  sy: Float32Array,
  n: number,
  out: Uint8Array,
  at: number,
): void {
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
export function sampleChroma(
  base: Uint8Array,
  cw: number,
  ch: number,
  uOffset: number,
  vOffset: number,
  sx: Float32Array,
  sy: Float32Array,
  n: number,
  out: Uint8Array,
  at: number,
): void {
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
    // V as U, written out: a call per sample in the renderer's hottest loops costs frame time (bench/renderer).
    k = vOffset + j;
    a = base[k]!;
    c = base[k + cw]!;
    top = (a << 8) + (base[k + 1]! - a) * fx;
    bottom = (c << 8) + (base[k + cw + 1]! - c) * fx;
    out[vOffset + at + i] = ((top << 8) + (bottom - top) * fy + 32768) >> 16;
  }
}

/** Lays a second sample of the photo (at tu, tv) over a luma run where its share is not 0. */
export function blendLuma(
  base: Uint8Array,
  width: number,
  height: number,
  alpha: Float32Array,
  tu: Float32Array,
  tv: Float32Array,
  n: number,
  out: Uint8Array,
  at: number,
): void {
  blendPlane(base, 0, width, height, 0, 1, alpha, tu, tv, n, out, at);
}

/** The same over both chroma planes (tu, tv in luma pixels). */
export function blendChroma(
  base: Uint8Array,
  cw: number,
  ch: number,
  uOffset: number,
  vOffset: number,
  alpha: Float32Array,
  tu: Float32Array,
  tv: Float32Array,
  n: number,
  out: Uint8Array,
  at: number,
): void {
  // Chroma pixels: half the resolution, their centres half a luma pixel in.
  blendPlane(base, uOffset, cw, ch, 0.5, 0.5, alpha, tu, tv, n, out, at);
  blendPlane(base, vOffset, cw, ch, 0.5, 0.5, alpha, tu, tv, n, out, at);
}

/** One plane's blend: the plane's pixel at luma position p is (p − shift) · scale. */
function blendPlane(
  base: Uint8Array,
  offset: number,
  stride: number,
  rows: number,
  shift: number,
  scale: number,
  alpha: Float32Array,
  tu: Float32Array,
  tv: Float32Array,
  n: number,
  out: Uint8Array,
  at: number,
): void {
  const maxX = stride - 1.001;
  const maxY = rows - 1.001;
  const row = offset + at;
  for (let i = 0; i < n; i++) {
    const share = alpha[i]!;
    if (share <= 0) continue;
    let x = (tu[i]! - shift) * scale;
    let y = (tv[i]! - shift) * scale;
    x = x < 0 ? 0 : x > maxX ? maxX : x;
    y = y < 0 ? 0 : y > maxY ? maxY : y;
    const photo = out[row + i]!;
    out[row + i] = photo + (bilinear(base, offset, stride, x, y) - photo) * share + 0.5;
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
export function blendTexture(
  plane: Float32Array,
  texture: Texture,
  alpha: Float32Array,
  tu: Float32Array,
  tv: Float32Array,
  n: number,
  out: Uint8Array,
  at: number,
): void {
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

/** BT.601 limited range, as libyuv (and so the encoder's input) uses. */
export function rgbToYuv(r: number, g: number, b: number): [number, number, number] {
  return [
    (66 * r + 129 * g + 25 * b + 0x1080) / 256,
    (112 * b - 74 * g - 38 * r + 0x8080) / 256,
    (112 * r - 94 * g - 18 * b + 0x8080) / 256,
  ];
}

export function texturePlanes(image: RgbaImage): Texture {
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
