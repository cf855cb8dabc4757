// Building the face rig (src/contract/face-rig.ts holds its format): what training measures
// once on the framing (the photo cropped to the frame size) so a session only warps; the
// per-pixel tables are derived from it in a few milliseconds when a session starts
// (agent/pipelines/builtin/warp.ts). The mouth interior (the dark cavity, and teeth when the
// photo's lips are closed) is a texture coloured from the lips.
//
// Landmarks are the 478 points of MediaPipe FaceMesh as @vladmandic/human returns them
// (468 mesh points in the standard topology, then 10 iris points), in framing pixels.
import {
  type EyeRig,
  FACE_RIG_VERSION,
  type FaceRig,
  type HeadRig,
  interpolate,
  type LocalFrame,
  type MouthRig,
  type Point,
  type RgbaImage,
  smoothstep,
  toImage,
  toLocal,
  UPPER_LIFT,
} from '../../contract/face-rig.ts';
import {
  CHIN,
  EYES,
  FACE_OVAL,
  FOREHEAD,
  JAW,
  LIP_BODY_PAIRS,
  LIPS_LOWER_INNER,
  LIPS_LOWER_OUTER,
  LIPS_UPPER_INNER,
  LIPS_UPPER_OUTER,
  MOUTH_CORNERS,
  NOSE_BOTTOM,
} from './face-landmarks.ts';
import { readLowerLip } from './lower-lip-edge.ts';
import { linesAroundTeeth } from './teeth-between-lips.ts';

export interface FaceRigInput extends RgbaImage {
  landmarks: Array<[number, number]>;
}

export interface BuiltFaceRig {
  rig: FaceRig;
  /** `mouth`: the cavity (and teeth) shown between the parted lips. */
  textures: Record<string, RgbaImage>;
}

/** The head's motion fades out between its ellipse and this multiple of it: over the hair's edge and the neck. */
const HEAD_FADE = 1.3;
/** Full openness drops the lower lip by this share of the mouth's width (a wide "ah"). */
const MAX_OPEN_PER_WIDTH = 0.22;
/** The widest opening of parted lips whose lower edge the photo's pixels do not show clearly (lower-lip-edge.ts). */
const UNSURE_OPEN_SHARE = 0.7;
/** An interior taller than this share of the mouth width shows in the photo (teeth, usually). */
export const VISIBLE_INTERIOR_PER_WIDTH = 0.06;
/** The lid skin that stretches in a blink: this share of the way from the lid up to the brow. */
const LID_SKIN_SHARE = 0.8;
/** The teeth revealed under the upper lip, as a share of the full opening. */
const TEETH_PER_OPEN = 0.24;
/** The lower teeth's height in the texture, as a share of the full opening (they show on wide shapes only). */
const LOWER_TEETH_PER_OPEN = 0.2;
/** How far past the landmarks a closing lid reaches: this share of the eye's width at each corner, of its height below. */
const EYE_MARGIN = 0.08;

export function buildFaceRig(input: FaceRigInput): BuiltFaceRig {
  const { width, height, rgba, landmarks } = input;
  if (!(width > 0 && height > 0) || rgba.length !== width * height * 4) {
    throw new Error(
      `the framing must be ${width}×${height} RGBA (${width * height * 4} bytes), got ${rgba.length} bytes`,
    );
  }
  if (landmarks.length < 468) throw new Error(`a face rig needs the 468 FaceMesh landmarks, got ${landmarks.length}`);
  for (const point of landmarks) {
    if (!Array.isArray(point) || !Number.isFinite(point[0]) || !Number.isFinite(point[1]))
      throw new Error('a landmark is not a pair of finite numbers');
  }
  const at = (index: number): Point => landmarks[index]!;

  // The face's horizontal: from one eye's centre to the other's.
  const eyeCentres = EYES.map((eye) => mean([...eye.upper, ...eye.lower].map(at)));
  const faceAxis = unit(sub(eyeCentres[1]!, eyeCentres[0]!));
  const faceHeight = length(sub(at(CHIN), at(FOREHEAD)));
  if (!(faceHeight > 8)) throw new Error('the landmarks do not span a face');

  const mouth = buildMouth(at, input);
  const eyes = EYES.map((eye) => buildEye(at, eye));
  const head = buildHead(at, faceAxis, faceHeight);
  const rig: FaceRig = { version: FACE_RIG_VERSION, width, height, head, mouth: mouth.rig, eyes };
  const texture = mouthTexture(input, mouth.rig, mouth.lipPoints, mouth.interior);
  return { rig: roundNumbers(rig), textures: { mouth: texture } };
}

function buildHead(at: (index: number) => Point, axis: Point, faceHeight: number): HeadRig {
  const centre = mean(FACE_OVAL.map(at));
  const oval = FACE_OVAL.map((index) => toLocal({ origin: centre, axis }, at(index)));
  const halfWidth = (Math.max(...oval.map(([u]) => u)) - Math.min(...oval.map(([u]) => u))) / 2;
  const halfHeight = (Math.max(...oval.map(([, v]) => v)) - Math.min(...oval.map(([, v]) => v))) / 2;
  // The oval stops at the hairline: the ellipse grows upward and sideways to carry the hair.
  const origin = toImage({ origin: centre, axis }, [0, -0.18 * halfHeight]);
  const chin = toLocal({ origin: centre, axis }, at(CHIN));
  const pivot = toImage({ origin: centre, axis }, [chin[0], chin[1] + 0.22 * faceHeight]);
  return { origin, axis, radii: [halfWidth * 1.22, halfHeight * 1.28], fade: HEAD_FADE, pivot, faceHeight };
}

function buildMouth(at: (index: number) => Point, image: RgbaImage) {
  const left = at(MOUTH_CORNERS[0]);
  const right = at(MOUTH_CORNERS[1]);
  const frame: LocalFrame = { origin: mean([left, right]), axis: unit(sub(right, left)) };
  const local = (index: number) => toLocal(frame, at(index));
  const corners: Point = [local(MOUTH_CORNERS[0])[0], local(MOUTH_CORNERS[1])[0]];
  const width = corners[1] - corners[0];
  if (!(width > 4)) throw new Error('the mouth landmarks are degenerate');
  let split = monotonic([[corners[0], 0], ...LIPS_LOWER_INNER.map(local), [corners[1], 0]]);
  let upperInner = monotonic([[corners[0], 0], ...LIPS_UPPER_INNER.map(local), [corners[1], 0]]);
  // The jaw below the mouth line: what the opening moves (the face's sides above it stay).
  const chin = local(CHIN)[1];
  const jaw = monotonic(JAW.map(local).filter(([, v]) => v > 0.25 * chin));
  if (jaw.length < 3 || !(chin > 0)) throw new Error('the jaw landmarks are degenerate');
  const nose = local(NOSE_BOTTOM)[1];
  let maxOpen = MAX_OPEN_PER_WIDTH * width;
  // The photo's own interior (between the inner lip lines) at the middle third of the mouth.
  let closed = middleGap(upperInner, split, corners) < VISIBLE_INTERIOR_PER_WIDTH * width;
  // Lips read closed over teeth the photo shows: the inner lines go to the teeth's edges.
  const lips = { frame, corners, upperOuter: LIPS_UPPER_OUTER.map(local), lowerOuter: LIPS_LOWER_OUTER.map(local) };
  const aroundTeeth = closed
    ? linesAroundTeeth(image, lips, { upper: upperInner, lower: split }, VISIBLE_INTERIOR_PER_WIDTH * width)
    : undefined;
  if (aroundTeeth) {
    ({ upper: upperInner, lower: split } = aroundTeeth);
    closed = false;
  }
  // Teeth below the whole mouth the landmarks drew: nothing they placed is trusted, so it opens less.
  const misplaced = aroundTeeth?.below === true;
  // Parted lips: the lower lip starts where the photo's pixels say, when they say it clearly.
  const lowerLip = readLowerLip(image, lips, split, VISIBLE_INTERIOR_PER_WIDTH * width);
  if (!closed && lowerLip.reading === 'moved') split = lowerLip.split;
  // The face errs toward less, with a smaller opening, where the lower lip's edge is unclear, and
  // where lips read closed show an opening of their own above it (teeth the reading above missed).
  if (misplaced || (closed ? lowerLip.reading === 'moved' : lowerLip.reading === 'unsure'))
    maxOpen *= UNSURE_OPEN_SHARE;
  // Closed lips hide the teeth: the texture shows them when the mouth opens.
  const teeth = closed ? Math.max(2, Math.round(TEETH_PER_OPEN * maxOpen)) : 0;
  // Parted lips show teeth right above the lower lip, and the landmarks are good to a pixel:
  // the split goes a pixel lower, so the lower lip takes none of the teeth along.
  if (!closed) for (const point of split) if (point[0] > corners[0] && point[0] < corners[1]) point[1] += 1;
  const rig: MouthRig = {
    ...frame,
    corners,
    split,
    nose,
    jaw,
    maxOpen,
    teeth,
    lowerTeeth: Math.max(2, Math.round(LOWER_TEETH_PER_OPEN * maxOpen)),
    ...(closed ? {} : { inner: upperInner }),
    textureU: Math.floor(corners[0]) - 2,
  };
  return {
    rig,
    lipPoints: LIP_BODY_PAIRS.map(([outer, inner]) => mean([at(outer), at(inner)])),
    interior: { upperInner, split, frame },
  };
}

function buildEye(at: (index: number) => Point, eye: (typeof EYES)[number]): EyeRig {
  const a = at(eye.corners[0]);
  const b = at(eye.corners[1]);
  const frame: LocalFrame = { origin: mean([a, b]), axis: unit(sub(b, a)) };
  const local = (index: number) => toLocal(frame, at(index));
  const corners: Point = [local(eye.corners[0])[0], local(eye.corners[1])[0]];
  const halfWidth = (corners[1] - corners[0]) / 2;
  const opening = Math.max(
    1,
    ...eye.upper.map(local).map(([u, v]) => interpolate(monotonic(eye.lower.map(local)), u) - v),
  );
  // Landmarks sit on the lids to a pixel or so: the closing lid reaches a little past the
  // corners and below the lower lid, so no white of the eye is left showing.
  const widen = Math.max(1, EYE_MARGIN * 2 * halfWidth) / halfWidth;
  const drop = Math.max(0.75, EYE_MARGIN * opening);
  const outward = ([u, v]: Point): Point => [u * (1 + widen), v];
  const upper = monotonic(eye.upper.map(local).map(outward));
  const reach = halfWidth * (1 + widen);
  // The drop fades out at the corners, where the lids meet.
  const lower = monotonic(
    eye.lower
      .map(local)
      .map(outward)
      .map(([u, v]): Point => [u, v + drop * Math.max(0, 1 - (u / reach) ** 2)]),
  );
  const brow = monotonic(eye.brow.map(local));
  // The crease: most of the way up from the lid to the brow, never closer to the lid than
  // the eye is tall (or the skin would stretch too thin to cover it)...
  const crease = upper.map(([u, v]): Point => {
    const browV = brow.length > 1 ? interpolate(brow, u) : v - 2 * opening;
    // ...nor farther than twice its height: a brow far above (a face seen from the side) stays put.
    return [u, Math.max(v - 2 * opening, Math.min(v - opening, v - LID_SKIN_SHARE * (v - browV)))];
  });
  return { ...frame, corners: [corners[0] * (1 + widen), corners[1] * (1 + widen)], upper, lower, crease };
}

// ------------------------------------------------------------------ the mouth texture

/** The photo's own mouth interior: between the inner lip lines. */
interface MouthInterior {
  upperInner: Point[];
  split: Point[];
  frame: LocalFrame;
}

/**
 * The inside of the mouth, row 0 at the upper edge: upper teeth first when the photo does not
 * show its own, then the cavity, then the lower teeth's biting edge at the bottom (the
 * renderer raises them from behind the lower lip on wide shapes). The cavity is the lips'
 * own hue darkened: in shadow under the teeth, lighter deeper in, with a tongue rising in
 * the middle, darker toward the corners where the cheeks shade it. Never flat black.
 */
function mouthTexture(image: RgbaImage, mouth: MouthRig, lipPoints: Point[], interior: MouthInterior): RgbaImage {
  const lip = averageColour(image, lipPoints, 1);
  const interiorPoints: Point[] = [];
  for (let u = mouth.corners[0] * 0.5; u <= mouth.corners[1] * 0.5; u += 1) {
    const top = interpolate(interior.upperInner, u);
    const bottom = interpolate(interior.split, u);
    for (let v = top + 1; v < bottom - 1; v += 1) interiorPoints.push(toImage(interior.frame, [u, v]));
  }
  // Teeth take the photo's own colour when it shows them; otherwise an ivory with a share of
  // the skin's own hue (none in a greyscale photo), lit as the skin beside the mouth is: a
  // fixed white glowed in dim photos, and a near-neutral grey read blue-grey beside warm skin.
  const shown = interiorPoints.length > 0 ? brightest(image, interiorPoints) : undefined;
  const teeth: Rgb = shown && luma(shown) > 120 ? shown : teethTone(image, mouth, interior.frame);
  const shadow = scale(lip, 0.2);
  const throat = scale(lip, 0.36);
  // The tongue: the lips' hue, a little lighter and pinker than the cavity around it.
  const tongue = mix(scale(lip, 0.72), [lip[0] * 0.8, lip[1] * 0.55, lip[2] * 0.6], 0.4);

  const width = Math.ceil(mouth.corners[1] - mouth.textureU) + 3;
  const height = Math.ceil(mouth.maxOpen * (1 + UPPER_LIFT)) + 4;
  const rgba = new Uint8Array(width * height * 4);
  const teethRows = mouth.teeth;
  const lowerRows = mouth.lowerTeeth ?? 0;
  const cavityRows = Math.max(1, height - teethRows - lowerRows);
  const centre = (mouth.corners[0] + mouth.corners[1]) / 2;
  const half = (mouth.corners[1] - mouth.corners[0]) / 2;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const across = (mouth.textureU + x - centre) / half;
      const shade = 0.3 + 0.7 * Math.sqrt(Math.max(0, 1 - across * across));
      let colour: Rgb;
      if (y < teethRows) {
        // Slightly darker at the gum line and at the biting edge.
        const edge = Math.min(y + 0.5, teethRows - y) / Math.max(1, teethRows * 0.35);
        const lit = 0.72 + 0.28 * Math.min(1, edge);
        colour = scale(teeth, lit * (0.55 + 0.45 * shade));
      } else {
        const depth = Math.min(1, (y - teethRows) / cavityRows);
        colour = mix(shadow, throat, smoothstep(0, 0.45, depth));
        // The tongue: a low hump across the middle of the cavity's lower part.
        const tu = across / 0.62;
        const tv = (1 - depth) / 0.5;
        const hump = 1 - smoothstep(0.55, 1, Math.sqrt(tu * tu + tv * tv));
        colour = mix(colour, tongue, 0.85 * hump);
        colour = scale(colour, shade);
        if (y >= height - lowerRows) {
          // Lower teeth, biting edge first, between the canines only (the arch turns away
          // behind the cheeks), in the cavity's shade.
          const fromEdge = (y - (height - lowerRows) + 0.5) / lowerRows;
          const arch = 1 - smoothstep(0.5, 0.72, Math.abs(across) + 0.25 * (1 - fromEdge));
          colour = mix(colour, scale(teeth, (0.6 + 0.2 * Math.min(1, fromEdge * 3)) * (0.55 + 0.45 * shade)), arch);
        }
      }
      const i = (y * width + x) * 4;
      rgba[i] = clampByte(colour[0]);
      rgba[i + 1] = clampByte(colour[1]);
      rgba[i + 2] = clampByte(colour[2]);
      rgba[i + 3] = 255;
    }
  }
  return { width, height, rgba };
}

type Rgb = [number, number, number];

/** Generated teeth are this much brighter than the skin beside the mouth, within these bounds. */
const TEETH_OVER_SKIN = 1.15;
const TEETH_LUMA = { min: 120, max: 212 } as const;
/** Generated teeth take this share of the skin's hue (the rest neutral). */
const TEETH_SKIN_HUE = 0.45;

/** Generated teeth: lit and tinted as the cheeks beside the mouth's corners are, between the nose and the lips. */
function teethTone(image: RgbaImage, mouth: MouthRig, frame: LocalFrame): Rgb {
  const points: Point[] = [];
  const lips = interpolate(mouth.split, 0);
  for (const corner of mouth.corners) {
    for (let step = 0; step <= 4; step++)
      points.push(toImage(frame, [1.25 * corner, mouth.nose + ((lips - mouth.nose) * step) / 4]));
  }
  const skin = averageColour(image, points, 2);
  const level = Math.min(TEETH_LUMA.max, Math.max(TEETH_LUMA.min, TEETH_OVER_SKIN * luma(skin)));
  const hue = skin.map((channel) => 1 - TEETH_SKIN_HUE + (TEETH_SKIN_HUE * channel) / Math.max(1, luma(skin))) as Rgb;
  return scale(hue, level / Math.max(1, luma(hue)));
}

function averageColour(image: RgbaImage, points: Point[], radius: number): Rgb {
  const sum: Rgb = [0, 0, 0];
  let n = 0;
  for (const [px, py] of points) {
    for (let dy = -radius; dy <= radius; dy++) {
      for (let dx = -radius; dx <= radius; dx++) {
        const pixel = pixelAt(image, px + dx, py + dy);
        if (!pixel) continue;
        sum[0] += pixel[0];
        sum[1] += pixel[1];
        sum[2] += pixel[2];
        n++;
      }
    }
  }
  return n > 0 ? [sum[0] / n, sum[1] / n, sum[2] / n] : [150, 80, 80];
}

/** The mean of the brightest fifth: the teeth among the photo's interior pixels. */
function brightest(image: RgbaImage, points: Point[]): Rgb | undefined {
  const pixels = points.map((p) => pixelAt(image, p[0], p[1])).filter((p): p is Rgb => p !== undefined);
  if (pixels.length === 0) return undefined;
  pixels.sort((a, b) => luma(b) - luma(a));
  const top = pixels.slice(0, Math.max(1, Math.ceil(pixels.length / 5)));
  return [mean1(top.map((p) => p[0])), mean1(top.map((p) => p[1])), mean1(top.map((p) => p[2]))];
}

function pixelAt(image: RgbaImage, x: number, y: number): Rgb | undefined {
  const ix = Math.round(x);
  const iy = Math.round(y);
  if (ix < 0 || iy < 0 || ix >= image.width || iy >= image.height) return undefined;
  const i = (iy * image.width + ix) * 4;
  return [image.rgba[i]!, image.rgba[i + 1]!, image.rgba[i + 2]!];
}

const luma = (c: Rgb) => 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
const scale = (c: Rgb, k: number): Rgb => [c[0] * k, c[1] * k, c[2] * k];
const mix = (a: Rgb, b: Rgb, t: number): Rgb => [
  a[0] + (b[0] - a[0]) * t,
  a[1] + (b[1] - a[1]) * t,
  a[2] + (b[2] - a[2]) * t,
];
const clampByte = (value: number) => Math.max(0, Math.min(255, Math.round(value)));

// ------------------------------------------------------------------ geometry

/** Sorted by u; points that fold back (landmark noise) are dropped. */
function monotonic(points: Point[]): Point[] {
  const sorted = [...points].sort((a, b) => a[0] - b[0]);
  const out: Point[] = [];
  for (const point of sorted) {
    const previous = out[out.length - 1];
    if (previous && point[0] - previous[0] < 0.25) {
      previous[1] = (previous[1] + point[1]) / 2;
      continue;
    }
    out.push([point[0], point[1]]);
  }
  return out;
}

function middleGap(upper: Point[], lower: Point[], corners: Point): number {
  const third = (corners[1] - corners[0]) / 6;
  let sum = 0;
  const steps = 9;
  for (let i = 0; i < steps; i++) {
    const u = -third + (2 * third * i) / (steps - 1);
    sum += interpolate(lower, u) - interpolate(upper, u);
  }
  return sum / steps;
}

const sub = (a: Point, b: Point): Point => [a[0] - b[0], a[1] - b[1]];
const length = (a: Point) => Math.hypot(a[0], a[1]);
function unit(a: Point): Point {
  const n = length(a);
  if (!(n > 0)) throw new Error('the landmarks are degenerate');
  return [a[0] / n, a[1] / n];
}
function mean(points: Point[]): Point {
  return [mean1(points.map((p) => p[0])), mean1(points.map((p) => p[1]))];
}
function mean1(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
}

/** Two decimals are finer than a pixel needs and keep the JSON small. */
function roundNumbers<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (_key, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v))) as T;
}
