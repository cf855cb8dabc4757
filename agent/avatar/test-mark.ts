// The "TEST" mark on a test session's video (docs/api.md#test-mode): white bold letters on a
// red rounded box in the frame's top-left corner, its height 7 % of the frame's. It is drawn
// once per frame size (letters from a built-in 5×7 bitmap font, anti-aliased against the
// box) and then copied into each frame, row by row, just before the frame is published.
// The box is opaque, its corners cut without blending: renderers reuse their buffer and
// redraw only what moved, so a mark blended over its own last copy would darken frame by
// frame, while an opaque copy gives the same pixels however often it lands.
import { VideoBufferType, type VideoFrame } from '@livekit/rtc-node';

/** The box's height as a share of the frame's: readable on a phone, not hiding the face. */
const HEIGHT_SHARE = 0.07;
const MIN_HEIGHT_PX = 16;
/** The letters' cap height, as a share of the box's. */
const CAP_SHARE = 0.6;
/** Space between the box and the frame's edges, and the box's corner radius, as shares of its height. */
const MARGIN_SHARE = 0.3;
const RADIUS_SHARE = 0.22;
/** Space left and right of the letters, in glyph cells. */
const PAD_CELLS = 2.5;
/** Subsamples per axis when drawing the letters' edges. */
const SUPERSAMPLE = 4;

export const TEST_MARK_BOX_RGB = [211, 26, 26] as const;
export const TEST_MARK_LETTER_RGB = [255, 255, 255] as const;

/** 5×7 bold capitals: the four letters of the mark, nothing else. */
const GLYPHS: Record<'T' | 'E' | 'S', readonly string[]> = {
  T: ['#####', '..#..', '..#..', '..#..', '..#..', '..#..', '..#..'],
  E: ['#####', '#....', '#....', '####.', '#....', '#....', '#####'],
  S: ['.###.', '#...#', '#....', '.###.', '....#', '#...#', '.###.'],
};
const WORD = ['T', 'E', 'S', 'T'] as const;
const GLYPH_W = 5;
const GLYPH_H = 7;
/** The word in glyph cells: four letters, one cell between each two. */
const WORD_CELLS = WORD.length * GLYPH_W + (WORD.length - 1);

/** Where the mark sits in a frame (luma pixels; x, y, width and height are even). */
export interface MarkBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The mark's place and look for one frame size. */
export interface MarkLayout {
  box: MarkBox;
  /** The mark's pixels (box-sized RGBA): opaque inside the rounded box, alpha 0 in its cut corners. */
  rgba: Uint8Array;
}

/** The mark's box for a frame of this size (shrunk to fit a frame too narrow for it). */
export function markBox(width: number, height: number): MarkBox {
  let boxHeight = Math.max(MIN_HEIGHT_PX, HEIGHT_SHARE * height);
  const widthFor = (h: number) => (WORD_CELLS + 2 * PAD_CELLS) * ((CAP_SHARE * h) / GLYPH_H);
  const fits = (h: number) => widthFor(h) + 2 * MARGIN_SHARE * h;
  if (fits(boxHeight) > width) boxHeight *= width / fits(boxHeight);
  const even = (n: number) => 2 * Math.max(1, Math.round(n / 2));
  const margin = even(MARGIN_SHARE * boxHeight);
  return {
    x: Math.min(margin, Math.max(0, width - even(widthFor(boxHeight)))),
    y: Math.min(margin, Math.max(0, height - even(boxHeight))),
    width: Math.min(even(widthFor(boxHeight)), width),
    height: Math.min(even(boxHeight), height),
  };
}

/** Draws the mark for a frame of this size. */
export function layoutMark(width: number, height: number): MarkLayout {
  const box = markBox(width, height);
  const cell = (CAP_SHARE * box.height) / GLYPH_H;
  const textX = (box.width - WORD_CELLS * cell) / 2;
  const textY = (box.height - GLYPH_H * cell) / 2;
  const radius = RADIUS_SHARE * box.height;
  const rgba = new Uint8Array(box.width * box.height * 4);
  const inkAt = (x: number, y: number): boolean => {
    const gx = Math.floor((x - textX) / cell);
    const gy = Math.floor((y - textY) / cell);
    if (gx < 0 || gy < 0 || gy >= GLYPH_H || gx >= WORD_CELLS) return false;
    const letter = Math.floor(gx / (GLYPH_W + 1));
    const column = gx % (GLYPH_W + 1);
    return column < GLYPH_W && GLYPHS[WORD[letter]!][gy]![column] === '#';
  };
  for (let y = 0; y < box.height; y++) {
    for (let x = 0; x < box.width; x++) {
      const o = 4 * (y * box.width + x);
      if (outsideRoundedBox(x + 0.5, y + 0.5, box.width, box.height, radius)) continue; // alpha stays 0
      let ink = 0;
      for (let sy = 0; sy < SUPERSAMPLE; sy++)
        for (let sx = 0; sx < SUPERSAMPLE; sx++)
          if (inkAt(x + (sx + 0.5) / SUPERSAMPLE, y + (sy + 0.5) / SUPERSAMPLE)) ink++;
      const share = ink / (SUPERSAMPLE * SUPERSAMPLE);
      for (let c = 0; c < 3; c++)
        rgba[o + c] = Math.round(TEST_MARK_BOX_RGB[c]! + share * (TEST_MARK_LETTER_RGB[c]! - TEST_MARK_BOX_RGB[c]!));
      rgba[o + 3] = 255;
    }
  }
  return { box, rgba };
}

function outsideRoundedBox(x: number, y: number, width: number, height: number, radius: number): boolean {
  const dx = Math.max(radius - x, x - (width - radius), 0);
  const dy = Math.max(radius - y, y - (height - radius), 0);
  return dx * dx + dy * dy > radius * radius;
}

/** One row's run of the mark: copy `pixels` to `offset` of the plane. */
interface Run {
  offset: number;
  pixels: Uint8Array;
}

/** The mark for one frame size and layout, as the row runs each plane gets. */
interface PreparedMark {
  width: number;
  height: number;
  type: VideoBufferType;
  runs: Run[];
}

/** Where R, G, B and A sit in each pixel's 4 bytes, per layout (LiveKit names them in byte order). */
const CHANNELS: Partial<Record<VideoBufferType, readonly number[]>> = {
  [VideoBufferType.RGBA]: [0, 1, 2, 3],
  [VideoBufferType.BGRA]: [2, 1, 0, 3],
  [VideoBufferType.ARGB]: [1, 2, 3, 0],
  [VideoBufferType.ABGR]: [3, 2, 1, 0],
};

/**
 * Marks frames "TEST" in place. Keeps the last size's mark (a session's frames all have one
 * size), so a frame costs a few dozen row copies.
 */
export class TestMark {
  #prepared: PreparedMark | undefined;

  /** The frame, marked: the same frame (its pixels changed), or for a layout other than I420 or 4-byte RGB, a marked I420 copy. */
  apply(frame: VideoFrame): VideoFrame {
    const marked =
      frame.type === VideoBufferType.I420 || CHANNELS[frame.type] ? frame : frame.convert(VideoBufferType.I420);
    const prepared = this.#preparedFor(marked);
    const data = marked.data;
    for (const run of prepared.runs) data.set(run.pixels, run.offset);
    return marked;
  }

  #preparedFor(frame: VideoFrame): PreparedMark {
    const cached = this.#prepared;
    if (cached && cached.width === frame.width && cached.height === frame.height && cached.type === frame.type)
      return cached;
    const layout = layoutMark(frame.width, frame.height);
    const channels = CHANNELS[frame.type];
    const runs = channels ? rgbRuns(layout, frame.width, channels) : i420Runs(layout, frame.width, frame.height);
    this.#prepared = { width: frame.width, height: frame.height, type: frame.type, runs };
    return this.#prepared;
  }
}

/** The opaque part of each row: the mark's corners are cut, the box between them is solid. */
function opaqueSpan(layout: MarkLayout, row: number): [number, number] {
  const { width } = layout.box;
  let start = 0;
  while (start < width && layout.rgba[4 * (row * width + start) + 3] === 0) start++;
  let end = width;
  while (end > start && layout.rgba[4 * (row * width + end - 1) + 3] === 0) end--;
  return [start, end];
}

function rgbRuns(layout: MarkLayout, frameWidth: number, channels: readonly number[]): Run[] {
  const { box, rgba } = layout;
  const runs: Run[] = [];
  for (let row = 0; row < box.height; row++) {
    const [start, end] = opaqueSpan(layout, row);
    const pixels = new Uint8Array(4 * (end - start));
    for (let x = start; x < end; x++) {
      const from = 4 * (row * box.width + x);
      const to = 4 * (x - start);
      for (let c = 0; c < 4; c++) pixels[to + channels[c]!] = rgba[from + c]!;
    }
    runs.push({ offset: 4 * ((box.y + row) * frameWidth + box.x + start), pixels });
  }
  return runs;
}

/** BT.601 limited range, as libyuv converts RGB frames for WebRTC. */
const lumaOf = (r: number, g: number, b: number) => Math.round(16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255);
const blueDiffOf = (r: number, g: number, b: number) => Math.round(128 + (-37.797 * r - 74.203 * g + 112 * b) / 255);
const redDiffOf = (r: number, g: number, b: number) => Math.round(128 + (112 * r - 93.786 * g - 18.214 * b) / 255);

function i420Runs(layout: MarkLayout, frameWidth: number, frameHeight: number): Run[] {
  const { box, rgba } = layout;
  const runs: Run[] = [];
  const at = (x: number, y: number, c: number) => rgba[4 * (y * box.width + x) + c]!;
  for (let row = 0; row < box.height; row++) {
    const [start, end] = opaqueSpan(layout, row);
    const pixels = new Uint8Array(end - start);
    for (let x = start; x < end; x++) pixels[x - start] = lumaOf(at(x, row, 0), at(x, row, 1), at(x, row, 2));
    runs.push({ offset: (box.y + row) * frameWidth + box.x + start, pixels });
  }
  // Chroma: one sample per 2×2 block (the box is on even coordinates), from the block's mean
  // colour; a block is drawn when all four of its pixels are the mark's.
  const chromaWidth = Math.ceil(frameWidth / 2);
  const chromaPlane = chromaWidth * Math.ceil(frameHeight / 2);
  const uPlane = frameWidth * frameHeight;
  const vPlane = uPlane + chromaPlane;
  for (let row = 0; row + 1 < box.height; row += 2) {
    const [a0, a1] = opaqueSpan(layout, row);
    const [b0, b1] = opaqueSpan(layout, row + 1);
    const start = Math.ceil(Math.max(a0, b0) / 2);
    const end = Math.floor(Math.min(a1, b1) / 2);
    if (end <= start) continue;
    const u = new Uint8Array(end - start);
    const v = new Uint8Array(end - start);
    for (let cx = start; cx < end; cx++) {
      const mean = [0, 1, 2].map(
        (c) => (at(2 * cx, row, c) + at(2 * cx + 1, row, c) + at(2 * cx, row + 1, c) + at(2 * cx + 1, row + 1, c)) / 4,
      ) as [number, number, number];
      u[cx - start] = blueDiffOf(...mean);
      v[cx - start] = redDiffOf(...mean);
    }
    const offset = ((box.y + row) / 2) * chromaWidth + box.x / 2 + start;
    runs.push({ offset: uPlane + offset, pixels: u }, { offset: vPlane + offset, pixels: v });
  }
  return runs;
}
