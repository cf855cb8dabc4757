// The head's warp, per run of pixels: the pose of head-motion.ts as a rigid turn and shift
// about the neck's pivot, faded out toward the neck and the background by a weight per pixel. Runs the head moves alone are
// mapped and sampled in one loop here; runs in the mouth or an eye are only mapped here and
// go on through mouth.ts or eyes.ts.

/** The head's pose this frame as the warp applies it: sin and cos − 1 of the roll, the shift, the pivot (luma px). */
export interface HeadWarp {
  sin: number;
  c1: number;
  tx: number;
  ty: number;
  px: number;
  py: number;
}

/**
 * Where each pixel of a run comes from under the head's motion: p − w(p)·((R − I)(p − pivot) + t),
 * the rigid motion faded by the weight. `start` is in the plane's pixels; results in luma pixels.
 */
export function mapHead(
  head: HeadWarp,
  weight: Float32Array,
  weightRow: number,
  y: number,
  start: number,
  n: number,
  chroma: boolean,
  sx: Float32Array,
  sy: Float32Array,
): void {
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
export function rigidLuma(
  head: HeadWarp,
  y: number,
  start: number,
  n: number,
  base: Uint8Array,
  width: number,
  height: number,
  out: Uint8Array,
): void {
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
export function rigidChroma(
  head: HeadWarp,
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
    // V as U, written out: a call per sample in the renderer's hottest loops costs frame time (bench/renderer).
    k = vOffset + j;
    a = base[k]!;
    c = base[k + cw]!;
    top = (a << 8) + (base[k + 1]! - a) * wx;
    bottom = (c << 8) + (base[k + cw + 1]! - c) * wx;
    out[vOffset + at + cx] = ((top << 8) + (bottom - top) * wy + 32768) >> 16;
  }
}

/**
 * A luma run moved by the head alone (mapHead and sampleLuma in one loop, written out: most of a
 * frame's pixels go through here or rigidLuma, and the fused loop skips the sx/sy round trip).
 */
export function warpLuma(
  head: HeadWarp,
  weight: Float32Array,
  weightRow: number,
  y: number,
  start: number,
  n: number,
  base: Uint8Array,
  width: number,
  height: number,
  out: Uint8Array,
): void {
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

/** A chroma run (both planes) moved by the head alone; `row` and `start` in chroma pixels. Fused as warpLuma is. */
export function warpChroma(
  head: HeadWarp,
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
    // V as U, written out: a call per sample in the renderer's hottest loops costs frame time (bench/renderer).
    k = vOffset + j;
    a = base[k]!;
    c = base[k + cw]!;
    top = (a << 8) + (base[k + 1]! - a) * wx;
    bottom = (c << 8) + (base[k + cw + 1]! - c) * wx;
    out[vOffset + at + cx] = ((top << 8) + (bottom - top) * wy + 32768) >> 16;
  }
}
