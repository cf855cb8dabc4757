// Teeth the landmark model closed the lips over. On some smiles (seen on a tilted one, teeth
// showing) FaceMesh draws both inner lip lines along the upper lip: read as closed lips, the
// face then opened its mouth over the photo's own teeth, pushing them down with the lower lip
// and painting generated teeth and a dark gap above them. The photo tells: down the middle of
// the mouth, between the outer lip lines, a band brighter than the lips above and below it, and
// less saturated than they are, tall enough to be an opening, is teeth. On others (issue 46)
// it draws the whole mouth above the teeth, its lower outer line along their top: there the
// teeth are looked for below it too, and must be greyer to count.
import { interpolate, type LocalFrame, type Point, type RgbaImage, toImage } from '../../contract/face-rig.ts';

/** How late lines round teeth found below the landmarks' mouth turn up to its corners (towardMiddle). */
const BELOW_FLATNESS = 6;
/** Columns read, as shares of the mouth's half-width either side of its middle. */
const COLUMNS = [-0.33, -0.16, 0, 0.16, 0.33];
/** Columns that must show the band. */
const COLUMNS_NEEDED = 4;
/** The teeth are this much brighter (luma) than the darkest lip above and below them. */
const OVER_LIPS = 22;
/** The band: pixels within this much of its brightest. */
const BAND_DROP = 14;
/**
 * Each search's window down a column, in shares of the lips' span (`from` past the upper outer
 * line, or past the lower one looking below; `to` past the lower one), where the band's
 * brightest point may be (`peakFrom` past the window's start, `peakTo` past the lower outer
 * line), and the band's saturation at most `saturationShare` of the lips' beside it.
 */
const SEARCH = {
  between: { from: -0.1, to: 0.35, peakFrom: 0.25, peakTo: 0.15, saturationShare: 0.8 },
  below: { from: -0.3, to: 2, peakFrom: 0.1, peakTo: 1.2, saturationShare: 0.5 },
} as const;
/**
 * Below this saturation everywhere the mouth is taken for greyscale, and read as the landmarks
 * say: without colour a lit lip reads as teeth (the cameraman's closed mouth did).
 */
const GREYSCALE_SATURATION = 0.06;

export interface TeethBand {
  /** Mouth-local v at the middle of the mouth (the frame's axis is the corners' line). */
  top: number;
  bottom: number;
}

export interface LipLines {
  frame: LocalFrame;
  corners: Point;
  upperOuter: Point[];
  lowerOuter: Point[];
}

/**
 * The inner lip lines moved to the edges of the teeth the photo shows down the middle of the
 * mouth (less toward the corners, where they stay); undefined when it shows none there.
 */
export function linesAroundTeeth(
  image: RgbaImage,
  lips: LipLines,
  inner: { upper: Point[]; lower: Point[] },
  minHeight: number,
): { upper: Point[]; lower: Point[]; below: boolean } | undefined {
  let below = false;
  let band = teethBand(image, lips, minHeight);
  if (!band) {
    band = teethBand(image, lips, minHeight, 'below');
    below = band !== undefined;
  }
  if (!band) return undefined;
  // Teeth below the landmarks' mouth run under most of its width (a smile's teeth do), and so
  // do the lines round them, turning up to the corners only at the ends.
  const flat = below ? BELOW_FLATNESS : 2;
  return {
    upper: towardMiddle(inner.upper, band.top, lips.corners, flat),
    lower: towardMiddle(inner.lower, band.bottom, lips.corners, flat),
    below,
  };
}

/**
 * Where the teeth are looked for: `between` the outer lip lines (and a little past the lower
 * one), or `below` it, where a mouth the landmarks drew whole above the photo's teeth has them
 * (its lower outer line runs along their top: seen on a tilted smile whose chin a dark sleeve
 * hides). Teeth found below must be greyer, as teeth are and a lit chin is not.
 */
export type TeethSearch = 'between' | 'below';

/** The teeth band down the middle of the mouth, or undefined when the photo shows none there. */
export function teethBand(
  image: RgbaImage,
  lips: LipLines,
  minHeight: number,
  search: TeethSearch = 'between',
): TeethBand | undefined {
  const half = (lips.corners[1] - lips.corners[0]) / 2;
  const middle = (lips.corners[0] + lips.corners[1]) / 2;
  const bands: TeethBand[] = [];
  for (const share of COLUMNS) {
    const u = middle + share * half;
    const band = bandInColumn(image, lips, u, minHeight, search);
    // Each column's band, moved to the middle's lip lines, so the columns can be compared.
    if (band) {
      const dy = interpolate(lips.upperOuter, middle) - interpolate(lips.upperOuter, u);
      bands.push({ top: band.top + dy, bottom: band.bottom + dy });
    }
  }
  if (bands.length < COLUMNS_NEEDED) return undefined;
  return { top: median(bands.map((b) => b.top)), bottom: median(bands.map((b) => b.bottom)) };
}

/**
 * `line` moved so that it passes through `v` at the mouth's middle, less toward the corners
 * (by 1 − x^flat, x the share of the half-width: the larger `flat`, the later it turns up).
 */
function towardMiddle(line: Point[], v: number, corners: Point, flat: number): Point[] {
  const middle = (corners[0] + corners[1]) / 2;
  const half = (corners[1] - corners[0]) / 2;
  const shift = v - interpolate(line, middle);
  // A flat move needs points to bend on: the line's own may be far apart near the corners.
  const bends = flat > 2 ? [-0.9, -0.8, -0.7, 0.7, 0.8, 0.9].map((x) => middle + x * half) : [];
  const us = [...new Set([...line.map(([u]) => u), ...bends])].sort((a, b) => a - b);
  return us.map(
    (u): Point => [u, interpolate(line, u) + shift * Math.max(0, 1 - Math.abs((u - middle) / half) ** flat)],
  );
}

function bandInColumn(
  image: RgbaImage,
  lips: LipLines,
  u: number,
  minHeight: number,
  search: TeethSearch,
): TeethBand | undefined {
  const top = interpolate(lips.upperOuter, u);
  const bottom = interpolate(lips.lowerOuter, u);
  const span = bottom - top;
  if (!(span > 2)) return undefined;
  // Past the lower outer line too: where FaceMesh misread the inner lips it drew the lower lip high.
  const window = SEARCH[search];
  const from = (search === 'below' ? bottom : top) + window.from * span;
  const to = bottom + window.to * span;
  const step = 0.5;
  const vs: number[] = [];
  const lumas: number[] = [];
  const sats: number[] = [];
  for (let v = from; v <= to; v += step) {
    const [x, y] = toImage(lips.frame, [u, v]);
    const pixel = sample(image, x, y);
    if (!pixel) return undefined;
    vs.push(v);
    lumas.push(0.299 * pixel[0] + 0.587 * pixel[1] + 0.114 * pixel[2]);
    const max = Math.max(...pixel);
    sats.push(max > 0 ? (max - Math.min(...pixel)) / max : 0);
  }
  const smooth = lumas.map((_, i) => mean(lumas.slice(Math.max(0, i - 1), i + 2)));
  // The brightest point between the lips' bodies: past the upper outer line, before the lower one.
  let peak = -1;
  for (let i = 0; i < vs.length; i++) {
    if (vs[i]! < from + window.peakFrom * span || vs[i]! > bottom + window.peakTo * span) continue;
    if (peak < 0 || smooth[i]! > smooth[peak]!) peak = i;
  }
  if (peak < 0) return undefined;
  let first = peak;
  let last = peak;
  while (first > 0 && smooth[first - 1]! >= smooth[peak]! - BAND_DROP) first--;
  while (last < vs.length - 1 && smooth[last + 1]! >= smooth[peak]! - BAND_DROP) last++;
  // Lips on both sides: darker above and below (the window's ends reached are no lips).
  if (first === 0 || last === vs.length - 1) return undefined;
  const above = argMin(smooth, 0, first);
  const below = argMin(smooth, last + 1, vs.length);
  if (smooth[peak]! - smooth[above]! < OVER_LIPS || smooth[peak]! - smooth[below]! < OVER_LIPS) return undefined;
  if (vs[last]! - vs[first]! + step < minHeight) return undefined;
  const bandSaturation = mean(sats.slice(first, last + 1));
  // The lips' own colour: their most saturated point each side (their darkest may be a shadow).
  const lipSaturation = Math.min(Math.max(...sats.slice(0, first)), Math.max(...sats.slice(last + 1)));
  if (Math.max(...sats) < GREYSCALE_SATURATION || bandSaturation > window.saturationShare * lipSaturation)
    return undefined;
  if (search === 'between') return { top: vs[first]!, bottom: vs[last]! };
  // Below, the teeth's edges are where they fade half-way to what is beside them: the blur under
  // them goes with the lower lip, or the opening would be drawn across their bottom row.
  while (first > above + 1 && smooth[first - 1]! >= (smooth[peak]! + smooth[above]!) / 2) first--;
  while (last < below - 1 && smooth[last + 1]! >= (smooth[peak]! + smooth[below]!) / 2) last++;
  return { top: vs[first]!, bottom: vs[last]! };
}

/** The pixel nearest (x, y); undefined outside the image. */
function sample(image: RgbaImage, x: number, y: number): [number, number, number] | undefined {
  const px = Math.round(x);
  const py = Math.round(y);
  if (px < 0 || py < 0 || px >= image.width || py >= image.height) return undefined;
  const i = (py * image.width + px) * 4;
  return [image.rgba[i]!, image.rgba[i + 1]!, image.rgba[i + 2]!];
}

function argMin(values: number[], from: number, to: number): number {
  let best = from;
  for (let i = from; i < to; i++) if (values[i]! < values[best]!) best = i;
  return best;
}

/** Shared with lower-lip-edge.ts, the other reading of the mouth's pixels. */
export function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
