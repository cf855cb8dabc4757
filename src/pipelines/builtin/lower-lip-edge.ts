// Where the lower lip really starts, read from the photo's pixels. On smiles that show their
// upper teeth FaceMesh often draws the lower inner lip line a few pixels down inside the red of
// the lower lip (issue 46): opened there, the lip's top band stayed under the teeth and a dark
// crescent opened inside the lip, a second mouth. Down each of a few columns across the middle
// of the mouth the lower lip's body (its reddest rows in the mouth's lower half; without colour,
// the rows just above its outer line, which the landmarks place well) has one colour; going up
// from it, the first rows that differ from it by half as much as the opening above does (teeth:
// brighter and less red; the gap under them: darker) are the opening. Where the columns do not
// agree, or show no opening as tall as one, the reading is `unsure` and the rig errs toward less
// (face-rig.ts opens such a mouth less wide), never toward a new gap.
import { interpolate, type LocalFrame, type Point, type RgbaImage, toImage } from '../../contract/face-rig.ts';
import { mean, median } from './teeth-between-lips.ts';

/** Columns read, as shares of the mouth's half-width either side of its middle. */
const COLUMNS = [-0.3, -0.15, 0, 0.15, 0.3];
/** Columns that must give an edge, and agree with the others' median within EDGE_AGREEMENT of the mouth's width. */
const COLUMNS_NEEDED = 4;
const EDGE_AGREEMENT = 0.04;
/** The lower lip's body: its rows at least as red as this share of the mouth's lower half. */
const BODY_QUANTILE = 0.7;
/** Below this spread of redness down the mouth's lower half the lip is not told by its colour. */
const LEAST_REDNESS_SPREAD = 0.08;
/** A row's difference from the lip's body: luma levels, and redness ((r − g) / r), each per unit. */
const LUMA_UNIT = 40;
const REDNESS_UNIT = 0.15;
/** The opening must differ from the lip's body by this many units somewhere above it. */
const OPENING_DIFFERENCE = 1.5;
/** How far the edge may move from the landmarks' line: this share of the lips' span. */
const MOST_MOVE = 0.3;
/** Moves smaller than this (px) are the landmarks' own precision: the line stays. */
const LEAST_MOVE = 1;

export interface MouthLines {
  frame: LocalFrame;
  corners: Point;
  upperOuter: Point[];
  lowerOuter: Point[];
}

/**
 * What the photo's pixels say of the lower lip's top edge down the middle of the mouth: `moved`,
 * the landmarks' line (`split`) moved there (fading to it toward the corners); `agrees`, it is
 * where the landmarks put it; `unsure`, the columns give no clear edge or disagree.
 */
export type LowerLipReading = { reading: 'moved'; split: Point[] } | { reading: 'agrees' | 'unsure' };

export function readLowerLip(image: RgbaImage, lines: MouthLines, split: Point[], minOpening: number): LowerLipReading {
  const middle = (lines.corners[0] + lines.corners[1]) / 2;
  const half = (lines.corners[1] - lines.corners[0]) / 2;
  const moves: number[] = [];
  for (const share of COLUMNS) {
    const u = middle + share * half;
    const edge = edgeInColumn(image, lines, split, u, minOpening);
    const move = edge ? edge.v - interpolate(split, u) : Number.NaN;
    if (edge && Math.abs(move) <= MOST_MOVE * edge.span) moves.push(move);
  }
  if (moves.length < COLUMNS_NEEDED) return { reading: 'unsure' };
  const move = median(moves);
  if (moves.filter((m) => Math.abs(m - move) <= EDGE_AGREEMENT * 2 * half).length < COLUMNS_NEEDED)
    return { reading: 'unsure' };
  if (Math.abs(move) < LEAST_MOVE) return { reading: 'agrees' };
  return {
    reading: 'moved',
    split: split.map(([u, v]): Point => [u, v + move * Math.max(0, 1 - ((u - middle) / half) ** 2)]),
  };
}

/** The lower lip's top edge in the column at `u` (mouth-local v) and the lips' span there, or undefined. */
function edgeInColumn(
  image: RgbaImage,
  lines: MouthLines,
  split: Point[],
  u: number,
  minOpening: number,
): { v: number; span: number } | undefined {
  const top = interpolate(lines.upperOuter, u);
  const bottom = interpolate(lines.lowerOuter, u);
  const span = bottom - top;
  if (!(span > 4)) return undefined;
  const step = 0.5;
  const rows: Array<{ v: number; luma: number; redness: number }> = [];
  for (let v = top; v <= bottom; v += step) {
    const pixel = sample(image, toImage(lines.frame, [u, v]));
    if (!pixel) return undefined;
    rows.push({ v, ...colourOf(pixel) });
  }
  // The lip's body: its reddest rows (a lipstick's core, or where the lip is most itself) in the
  // lower half of the mouth, below the landmarks' line less a quarter of the span (that line may
  // sit inside the lip, never far above it). Without colour to tell it by (greyscale, pale lips),
  // the rows just above the lower outer line, which the landmarks place well.
  const lower = rows.filter(({ v }) => v >= Math.max(top + 0.4 * span, interpolate(split, u) - 0.25 * span));
  if (lower.length < 4) return undefined;
  const rednesses = lower.map((row) => row.redness);
  const body =
    Math.max(...rednesses) - Math.min(...rednesses) >= LEAST_REDNESS_SPREAD
      ? lower.filter((row) => row.redness >= quantile(rednesses, BODY_QUANTILE))
      : rows.filter(({ v }) => v >= bottom - 0.25 * span && v <= bottom - 0.08 * span);
  if (body.length === 0) return undefined;
  const lipLuma = median(body.map((row) => row.luma));
  const lipRedness = median(body.map((row) => row.redness));
  const difference = rows.map(
    (row) => Math.abs(row.luma - lipLuma) / LUMA_UNIT + Math.abs(row.redness - lipRedness) / REDNESS_UNIT,
  );
  const smooth = difference.map((_, i) => mean(difference.slice(Math.max(0, i - 1), i + 2)));
  const bodyTop = rows.indexOf(body[0]!);
  // The opening's strongest difference, between the upper lip's body and the lower lip's.
  let strongest = 0;
  for (let i = 0; i < bodyTop; i++) if (rows[i]!.v > top + 0.15 * span) strongest = Math.max(strongest, smooth[i]!);
  if (strongest < OPENING_DIFFERENCE) return undefined;
  // Up from the body: the first row half as different as the opening is where the lip ends.
  let edge = -1;
  for (let i = bodyTop; i >= 0; i--) {
    if (smooth[i]! >= strongest / 2) {
      edge = i;
      break;
    }
  }
  if (edge < 0) return undefined;
  // An opening, not a crease: it stays different for as tall as one above the edge.
  let tall = 0;
  for (let i = edge; i >= 0 && smooth[i]! >= strongest / 2; i--) tall += step;
  if (tall < minOpening) return undefined;
  return { v: rows[edge]!.v + step / 2, span };
}

function colourOf([r, g, b]: [number, number, number]): { luma: number; redness: number } {
  return { luma: 0.299 * r + 0.587 * g + 0.114 * b, redness: r > 0 ? Math.max(0, r - g) / r : 0 };
}

/** The pixel at (x, y), bilinear; undefined outside the image. */
function sample(image: RgbaImage, [x, y]: Point): [number, number, number] | undefined {
  const x0 = Math.floor(x);
  const y0 = Math.floor(y);
  if (x0 < 0 || y0 < 0 || x0 + 1 >= image.width || y0 + 1 >= image.height) return undefined;
  const fx = x - x0;
  const fy = y - y0;
  const out: [number, number, number] = [0, 0, 0];
  for (let c = 0; c < 3; c++) {
    const at = (px: number, py: number) => image.rgba[(py * image.width + px) * 4 + c]!;
    const upper = at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx;
    const lower = at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx;
    out[c] = upper * (1 - fy) + lower * fy;
  }
  return out;
}

function quantile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
}
