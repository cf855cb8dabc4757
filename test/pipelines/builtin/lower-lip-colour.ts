// Issue 46's "second mouth", measured without the landmark model: on smiles with teeth the
// landmarks can put the lips' parting inside the red of the lower lip, and speaking then opens
// a dark crescent in the lower lip, below a band of lip that stays under the photo's teeth.
// Here the lips are found by colour in the NEUTRAL frame and each face-aligned column is
// read top to bottom: the photo's opening (teeth), then the lower lip. In the SPEAKING frame
// a legitimate opening is dark right under the teeth (the lower lip moved away); a second
// mouth is lip first (the band), then dark, then lip again (the dropped rest of the lip).
// The rig is used only to place and orient the box round the mouth, never to say where lips are.
import { type LocalFrame, type MouthRig, toImage } from '../../../src/contract/face-rig.ts';

export interface RgbaFrame {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel. */
  rgba: Uint8Array;
}

/** A face-aligned box: u along `frame.axis` (the mouth corners' line), v down the face, in pixels. */
export interface MouthBox {
  frame: LocalFrame;
  u: [number, number];
  v: [number, number];
}

export interface SecondMouthCount {
  /** The neutral photo's colour can't tell lips from skin (greyscale): nothing was measured. */
  colourless: boolean;
  /** Lower-lip pixels found by colour in the neutral frame (in columns where the photo's opening shows). */
  lowerLip: number;
  /** Of those, dark in the speaking frame right under the teeth: the lip moved away (fine). */
  opened: number;
  /** Of those, dark in the speaking frame below a band of lip that stayed under the teeth: the bug. */
  secondMouth: number;
  /** The photo's teeth, found by their look (brighter and greyer than the skin) in the neutral frame. */
  teeth: number;
  /** Pixels above them dark in the speaking frame: an opening drawn over the teeth, in the upper lip (the bug's other form). */
  aboveTeeth: number;
  /** Box-sized RGBA for debugging, over the speaking frame dimmed: lower lip grey, opened blue, second mouth red, the band yellow, dark above the teeth magenta. */
  mask: RgbaFrame;
}

/**
 * Red dominance, (r − g) / r, when red is the strongest channel (hue between magenta and
 * orange), else 0. Skin is red-leaning too, but lips lean further (their green is lower for
 * their red); teeth and grey light lean least. Ratios, so a dim or a tinted photo keeps its order.
 */
export function redness(r: number, g: number, b: number): number {
  return r > g && r >= b ? (r - g) / r : 0;
}

export function luma(r: number, g: number, b: number): number {
  return 0.299 * r + 0.587 * g + 0.114 * b;
}

/** Lips must lean this much further red than the skin's median to be told apart (else colourless). */
const MIN_LIP_CONTRAST = 0.07;
/** A pixel is lip when its redness is past this share of the way from the skin's median to the lips' (97th percentile). */
const LIP_SHARE = 0.45;
/** Speaking-frame dark: below this luma (0–255)… */
const DARK_LUMA = 80;
/** …and below this share of the same pixel's neutral luma (the cavity texture is 0.2–0.6 of the lips' tone). */
const DARK_SHARE = 0.6;
/** Holes this share of the mouth's width or less are closed in a column's lip (highlights on the lower lip). */
const HOLE = 0.04;
/** The lower lip's top may sit this share of the mouth's width below the teeth (the blur between them). */
const BLUR = 0.06;
/** A band pixel keeps at least this share of its neutral luma. */
const STILL = 0.85;
/**
 * A band of lip at least this many pixels thick, and this share of the neutral lower lip's
 * thickness in its column, between the teeth and a dark pixel makes it a second mouth.
 */
const BAND = 3;
const BAND_SHARE = 0.2;

export function countSecondMouth(neutral: RgbaFrame, spoken: RgbaFrame, box: MouthBox): SecondMouthCount {
  const width = Math.round(box.u[1] - box.u[0]);
  const height = Math.round(box.v[1] - box.v[0]);
  const before = sampleBox(neutral, box, width, height);
  const after = sampleBox(spoken, box, width, height);
  const mask = { width, height, rgba: new Uint8Array(width * height * 4) };
  // Unpainted, the mask shows the speaking frame's box, dimmed.
  for (let i = 0; i < width * height; i++) mask.rgba.set([...rgb(after, i).map((c) => c * 0.5), 255], i * 4);
  const count: SecondMouthCount = {
    colourless: true,
    lowerLip: 0,
    opened: 0,
    secondMouth: 0,
    teeth: 0,
    aboveTeeth: 0,
    mask,
  };

  // The box is mostly skin: its median luma is the skin's.
  const lumas = Float32Array.from({ length: width * height }, (_, i) => luma(...rgb(before, i)));
  const skinLuma = median(lumas);
  const isDark = (i: number) => {
    const l = luma(...rgb(after, i));
    return l < DARK_LUMA && l < DARK_SHARE * lumas[i]!;
  };
  const paint = (i: number, colour: [number, number, number]) => mask.rgba.set([...colour, 255], i * 4);
  countAboveTeeth(before, lumas, skinLuma, isDark, paint, box, count);

  // The skin's redness is the box's median; the lips' its 97th percentile.
  const reds = Float32Array.from({ length: width * height }, (_, i) => redness(...rgb(before, i)));
  const sorted = reds.slice().sort();
  const skin = sorted[Math.floor(sorted.length / 2)]!;
  const lips = sorted[Math.floor(sorted.length * 0.97)]!;
  if (lips - skin < MIN_LIP_CONTRAST) return count;
  count.colourless = false;
  const threshold = skin + LIP_SHARE * (lips - skin);
  // Lip: red enough and not in shadow (the photo's own dark mouth corners lean red too).
  const isLip = (image: Float32Array, i: number) => {
    const [r, g, b] = rgb(image, i);
    return redness(r, g, b) > threshold && luma(r, g, b) > 0.35 * skinLuma;
  };
  // The photo's opening: teeth (less red than skin) or its dark inside.
  const isOpening = (i: number) => !isLip(before, i) && (reds[i]! < skin - 0.03 || lumas[i]! < 0.5 * skinLuma);
  // The band is the photo's own lip left in place: lip-coloured and as light as it was. (The
  // cavity texture is shaded from the lips' colour, so its lit top edge is lip-coloured too, darker.)
  const isStill = (i: number) => isLip(after, i) && luma(...rgb(after, i)) > STILL * lumas[i]!;
  // In pixels: the box is 1.3 mouth widths wide.
  const hole = Math.max(1, Math.round((HOLE * width) / 1.3));
  const reach = Math.max(3, Math.round((BLUR * width) / 1.3));

  for (let x = 0; x < width; x++) {
    const at = (y: number) => y * width + x;
    // Only columns where the photo shows its opening right above the lower lip (teeth, inside).
    const lower = lowerLipRun(
      height,
      (y) => isLip(before, at(y)),
      (y) => isOpening(at(y)),
      hole,
      reach,
    );
    if (!lower) continue;
    for (let y = lower.top; y <= lower.bottom; y++) paint(at(y), [90, 90, 90]);
    count.lowerLip += lower.bottom - lower.top + 1;
    // Down the speaking column from just above the lip's old top: dark first is the lip gone;
    // lip first, BAND thick, then dark, is the second mouth.
    // A band worth the name: a real share of the lip, thicker than the blur at its top edge.
    const thick = Math.max(BAND, BAND_SHARE * (lower.bottom - lower.top + 1));
    let band = 0;
    let opened = false;
    for (let y = Math.max(0, lower.top - 2); y <= lower.bottom; y++) {
      if (isDark(at(y))) {
        if (y < lower.top) continue;
        const second: boolean = band >= thick && !opened && lipBelow(after, isLip, x, y, width, height);
        if (second) count.secondMouth++;
        else count.opened++;
        opened ||= !second;
        paint(at(y), second ? [255, 40, 40] : [60, 120, 255]);
      } else if (isStill(at(y)) && !opened) {
        band++;
        if (band >= thick) paint(at(y), [255, 220, 0]);
      }
    }
  }
  return count;
}

/**
 * The lower lip in a column: the lowest run of lip (small holes, highlights, closed) with the
 * photo's opening right above it. Lower runs without one are the chin's shadows and the like.
 */
function lowerLipRun(
  height: number,
  isLip: (y: number) => boolean,
  isOpening: (y: number) => boolean,
  hole: number,
  reach: number,
): { top: number; bottom: number } | null {
  let y = height - 1;
  while (y >= 0) {
    while (y >= 0 && !isLip(y)) y--;
    if (y < 0) return null;
    const bottom = y;
    let top = y;
    for (y--; y >= 0 && top - y <= hole + 1; y--) if (isLip(y)) top = y;
    y = top - 1;
    if (bottom - top >= 1 && openingAbove(top, isLip, isOpening, reach)) return { top, bottom };
  }
  return null;
}

/** Teeth are this much brighter than the box's median (the skin)… */
const TEETH_LUMA = 1.1;
/** …and at most this share of its saturation. */
const TEETH_SATURATION = 0.75;
/** Teeth start between these shares of the mouth's width about its corners' line. */
const TEETH_FROM = -0.15;
const TEETH_TO = 0.3;
/** Looked at above the teeth: this share of the box's height (the upper lip, and more). */
const ABOVE_TEETH = 0.2;

/**
 * The opening drawn in the wrong place, the other way round: the rig moves the lower lip and the
 * jaw, never what is above the photo's teeth, so a pixel over them that turns dark is a gap
 * opened in the upper lip (the landmarks put the whole mouth above the teeth). The teeth are
 * found by their look alone, brighter and greyer than the skin, the tallest such run in each
 * column; greyscale photos have none to find.
 */
function countAboveTeeth(
  before: Float32Array,
  lumas: Float32Array,
  skinLuma: number,
  isDark: (i: number) => boolean,
  paint: (i: number, colour: [number, number, number]) => void,
  box: MouthBox,
  count: SecondMouthCount,
): void {
  const width = Math.round(box.u[1] - box.u[0]);
  const height = Math.round(box.v[1] - box.v[0]);
  // Where teeth can be: about the mouth's line (v = 0), not the chin's highlights below it.
  const mouthWidth = width / 1.3;
  const rows = [TEETH_FROM, TEETH_TO].map((share) => Math.round(share * mouthWidth - box.v[0])) as [number, number];
  const saturation = (i: number) => {
    const [r, g, b] = rgb(before, i);
    const max = Math.max(r, g, b);
    return max > 0 ? (max - Math.min(r, g, b)) / max : 0;
  };
  const skinSaturation = median(Float32Array.from({ length: width * height }, (_, i) => saturation(i)));
  const isTeeth = (i: number) => lumas[i]! > TEETH_LUMA * skinLuma && saturation(i) < TEETH_SATURATION * skinSaturation;
  const reach = Math.round(ABOVE_TEETH * height);
  for (let x = 0; x < width; x++) {
    let teeth: { top: number; bottom: number } | null = null;
    for (let y = Math.max(0, rows[0]); y < Math.min(height, rows[1]); y++) {
      if (!isTeeth(y * width + x)) continue;
      const top = y;
      while (y + 1 < height && isTeeth((y + 1) * width + x)) y++;
      if (y - top >= 1 && (!teeth || y - top > teeth.bottom - teeth.top)) teeth = { top, bottom: y };
    }
    if (!teeth) continue;
    count.teeth += teeth.bottom - teeth.top + 1;
    // Two pixels' blur at the teeth's edge are theirs.
    for (let y = Math.max(0, teeth.top - reach); y < teeth.top - 2; y++) {
      if (!isDark(y * width + x)) continue;
      count.aboveTeeth++;
      paint(y * width + x, [255, 0, 255]);
    }
  }
}

/** The photo's opening within `reach` above `top`, past the blur between lip and teeth (neither). */
function openingAbove(
  top: number,
  isLip: (y: number) => boolean,
  isOpening: (y: number) => boolean,
  reach: number,
): boolean {
  for (let y = top - 1; y >= Math.max(0, top - reach); y--) {
    if (isOpening(y)) return true;
    if (isLip(y)) return false;
  }
  return false;
}

/** Lip somewhere below in the speaking column: the dark pixel is bordered by lip under it too. */
function lipBelow(
  image: Float32Array,
  isLip: (image: Float32Array, i: number) => boolean,
  x: number,
  y: number,
  width: number,
  height: number,
): boolean {
  for (let below = y + 1; below < height; below++) if (isLip(image, below * width + x)) return true;
  return false;
}

function median(values: Float32Array): number {
  return values.slice().sort()[Math.floor(values.length / 2)]!;
}

function rgb(image: Float32Array, i: number): [number, number, number] {
  return [image[i * 3]!, image[i * 3 + 1]!, image[i * 3 + 2]!];
}

/** The box resampled upright (bilinear), one pixel per unit of u and v, as RGB floats. */
function sampleBox(image: RgbaFrame, box: MouthBox, width: number, height: number): Float32Array {
  const out = new Float32Array(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const [ix, iy] = toImage(box.frame, [box.u[0] + x + 0.5, box.v[0] + y + 0.5]);
      const x0 = Math.min(image.width - 2, Math.max(0, Math.floor(ix - 0.5)));
      const y0 = Math.min(image.height - 2, Math.max(0, Math.floor(iy - 0.5)));
      const fx = Math.min(1, Math.max(0, ix - 0.5 - x0));
      const fy = Math.min(1, Math.max(0, iy - 0.5 - y0));
      for (let c = 0; c < 3; c++) {
        const p = (yy: number, xx: number) => image.rgba[(yy * image.width + xx) * 4 + c]!;
        const top = p(y0, x0) * (1 - fx) + p(y0, x0 + 1) * fx;
        const bottom = p(y0 + 1, x0) * (1 - fx) + p(y0 + 1, x0 + 1) * fx;
        out[(y * width + x) * 3 + c] = top * (1 - fy) + bottom * fy;
      }
    }
  return out;
}

/**
 * Second-mouth pixels a face may show and still pass, as a share of its lower lip (and at
 * least NOISE_PIXELS): where lip meets the opening at a slant, at the corners, a few columns
 * read lip-then-dark; on faces that look clean that stays under ~6 % of the lower lip, while a
 * crescent fills a third of it or more.
 */
export const NOISE_SHARE = 0.08;
/** Dark pixels above the teeth a face may show, per pixel of the mouth's width. */
export const ABOVE_TEETH_NOISE = 0.5;
export const NOISE_PIXELS = 12;

export interface SecondMouthVerdict {
  /** One count per speaking frame, in their order. */
  counts: SecondMouthCount[];
  /** The index of the frame with the most wrong dark pixels (second mouth and above the teeth). */
  worst: number;
  /** Unmeasured: the photo's colour can't tell lips from skin, or no lower lip was found. */
  unmeasured: 'no colour' | 'no lower lip' | null;
  /** The most upper-lip pixels any speaking frame turned dark above the photo's teeth. */
  aboveTeeth: number;
  fails: boolean;
}

/** The check over a face's speaking frames, in a box placed (only placed) by the rig's mouth. */
export function secondMouthVerdict(neutral: RgbaFrame, spoken: RgbaFrame[], mouth: MouthRig): SecondMouthVerdict {
  const width = mouth.corners[1] - mouth.corners[0];
  // Generous round the mouth, and down past where the lower lip drops at its widest.
  const box: MouthBox = {
    frame: mouth,
    u: [mouth.corners[0] - 0.15 * width, mouth.corners[1] + 0.15 * width],
    v: [-0.5 * width, 0.45 * width + mouth.maxOpen],
  };
  const counts = spoken.map((frame) => countSecondMouth(neutral, frame, box));
  const wrong = (c: SecondMouthCount) => c.secondMouth + c.aboveTeeth;
  const worst = counts.reduce((a, b, i) => (wrong(b) > wrong(counts[a]!) ? i : a), 0);
  const unmeasured = counts[0]!.colourless ? 'no colour' : counts[0]!.lowerLip === 0 ? 'no lower lip' : null;
  const floor = Math.max(NOISE_PIXELS, NOISE_SHARE * counts[0]!.lowerLip);
  // Above the teeth nothing of the opening belongs: half a row of pixels across the mouth is the
  // blur at its corners, where the opening's ends meet the teeth at a slant.
  const aboveFloor = Math.max(NOISE_PIXELS, ABOVE_TEETH_NOISE * width);
  const above = Math.max(...counts.map((c) => c.aboveTeeth));
  return {
    counts,
    worst,
    unmeasured,
    aboveTeeth: above,
    // Each half is judged where it was measured: a photo whose lower lip is hidden still shows its teeth.
    fails: (unmeasured === null && counts[worst]!.secondMouth > floor) || (counts[0]!.teeth > 0 && above > aboveFloor),
  };
}
