// Smiles WITH upper teeth showing (issue 46: the landmarks put the lips' parting inside the
// lower lip on these): every face in @vladmandic/human's sample screenshots (MIT, read from
// node_modules at run time, not committed) that shows its upper teeth, picked by eye, plus the
// repo's astronaut. Each is posed one way a visitor's upload comes, in turn: upright, tilted
// 15–30° either way, small or large in the frame, dim, warm or cool light, lipstick, greyscale.
// PNG bytes, deterministic, made with sharp; the posing is stranger-photos.ts's.
import sharp from 'sharp';
import { portraitPng } from '../../fixtures/index.ts';
import { redness } from './lower-lip-colour.ts';
import { detectTile, FACE_DETECT, FACE_MATCH, type Pose, posed, type Region } from './stranger-photos.ts';

/**
 * One tile of the face-match screenshot's grid of extracted faces, measured on it: rows 112.4
 * px apart from y 283 (the dark gaps between them), columns 106.67 apart; the bottom rows hold
 * the age/gender label and are left off.
 */
function gridTile(row: number, column: number): Region {
  return { left: Math.round(6 + 106.67 * column), top: Math.round(283 + 112.4 * row), width: 98, height: 94 };
}

interface SmilingFace {
  source: string | (() => Uint8Array | Promise<Uint8Array>);
  region: Region | null;
  /** The pose's width times this (the astronaut's photo is head and shoulders, not a face tile). */
  scale?: number;
}

/** The faces, by grid place; each one picked by looking at it enlarged: upper teeth show. */
const FACES: Record<string, SmilingFace> = {
  ...Object.fromEntries(
    [
      [1, 6],
      [1, 12],
      [2, 3],
      [2, 5],
      [2, 6],
      [2, 8],
      [2, 12],
      [2, 14],
      [2, 15],
      [2, 16],
      [2, 17],
      [3, 2],
      [3, 5],
      [3, 6],
      [3, 7],
      [3, 8],
      [3, 12],
      [3, 13],
      [3, 15],
      [4, 1],
      [4, 3],
      [4, 4],
      [4, 7],
      [4, 9],
      [4, 12],
      [4, 13],
      [4, 17],
      [5, 1],
      [5, 3],
      [5, 6],
      [5, 7],
      [5, 8],
      [5, 9],
      [5, 10],
      [5, 13],
      [5, 17],
    ].map(([row, column]) => [`grid-${row}-${column}`, { source: FACE_MATCH, region: gridTile(row!, column!) }]),
  ),
  // The face-detect screenshot's fourth tile (a young woman, teeth showing) and its fifth (greyscale already).
  'detect-3': { source: FACE_DETECT, region: detectTile(3) },
  'detect-4': { source: FACE_DETECT, region: detectTile(4) },
  astronaut: { source: portraitPng, region: null, scale: 1.5 },
};

type Look = 'plain' | 'lipstick' | 'warm' | 'cool' | 'greyscale';

interface Variant {
  name: string;
  pose: Pose;
  look: Look;
}

const DIM = { light: 0.45, background: '#3a3d42' };
/** Taken in turn, face by face. */
const VARIANTS: Variant[] = [
  { name: 'upright', pose: { tilt: 0, width: 260 }, look: 'plain' },
  { name: 'tilted-cw-15', pose: { tilt: 15, width: 260 }, look: 'plain' },
  { name: 'lipstick', pose: { tilt: -6, width: 280 }, look: 'lipstick' },
  { name: 'tilted-ccw-20', pose: { tilt: -20, width: 260, at: [0.42, 0.45] }, look: 'plain' },
  { name: 'warm', pose: { tilt: 8, width: 260 }, look: 'warm' },
  {
    name: 'small',
    pose: { tilt: 0, width: 150, canvas: { width: 1280, height: 800 }, at: [0.58, 0.4] },
    look: 'plain',
  },
  { name: 'tilted-cw-30', pose: { tilt: 30, width: 280 }, look: 'plain' },
  { name: 'cool', pose: { tilt: -10, width: 260 }, look: 'cool' },
  { name: 'dim', pose: { tilt: 5, width: 260, ...DIM }, look: 'plain' },
  { name: 'large', pose: { tilt: 0, width: 420, at: [0.5, 0.48] }, look: 'plain' },
  { name: 'tilted-ccw-30', pose: { tilt: -30, width: 280 }, look: 'plain' },
  { name: 'greyscale', pose: { tilt: 12, width: 260 }, look: 'greyscale' },
  { name: 'lipstick-tilted', pose: { tilt: 22, width: 260 }, look: 'lipstick' },
];

const RECIPES = new Map<string, { smiling: SmilingFace; variant: Variant }>(
  Object.entries(FACES).map(([face, smiling], i) => {
    const variant = VARIANTS[i % VARIANTS.length]!;
    return [`${face}-${variant.name}`, { smiling, variant }] as const;
  }),
);

/** Every smile photo's name: the face, then how it is posed. */
export const SMILE_PHOTOS: string[] = [...RECIPES.keys()];

const made = new Map<string, Promise<Uint8Array>>();

/** One smile as uploaded (PNG bytes); made once per process. */
export function smilePhoto(name: string): Promise<Uint8Array> {
  const recipe = RECIPES.get(name);
  if (!recipe) throw new Error(`no smile photo named ${name}`);
  let bytes = made.get(name);
  if (!bytes) {
    bytes = make(recipe.smiling, recipe.variant);
    made.set(name, bytes);
  }
  return bytes;
}

async function make({ source, region, scale = 1 }: SmilingFace, variant: Variant): Promise<Uint8Array> {
  const look = variant.look;
  // At most 400 px wide, so the tilted tile still fits the frame.
  const pose = { ...variant.pose, width: Math.min(400, Math.round(variant.pose.width * scale)) };
  let tile = await sharp(typeof source === 'string' ? source : await source());
  if (region) tile = tile.extract(region);
  let bytes: Uint8Array = new Uint8Array(await tile.png().toBuffer());
  if (look === 'lipstick') bytes = await withLipstick(bytes);
  const photo = sharp(await posed(bytes, null, pose));
  if (look === 'warm') photo.linear([1.08, 0.96, 0.78], [6, 0, 0]);
  if (look === 'cool') photo.linear([0.86, 0.98, 1.12], [0, 0, 8]);
  if (look === 'greyscale') photo.greyscale().toColourspace('srgb');
  return new Uint8Array(await photo.png().toBuffer());
}

/**
 * Lips deepened and reddened, found by colour: in the tile's lower middle, the pixels that
 * lean further red than the skin's median, weighted by how far (so the edge stays soft).
 */
async function withLipstick(png: Uint8Array): Promise<Uint8Array> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  // Redness read blurred: the tiles' JPEG colour blocks would otherwise paint blotches.
  const smooth = await sharp(png).removeAlpha().blur(1.5).raw().toBuffer();
  const { width, height } = info;
  // Where a centred face tile's mouth is: its skin's median and its lips' 99th percentile.
  const inMouthArea = (x: number, y: number) =>
    y > height * 0.58 && y < height * 0.95 && x > width * 0.28 && x < width * 0.72;
  const reds: number[] = [];
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      if (inMouthArea(x, y)) {
        const i = (y * width + x) * 3;
        reds.push(redness(smooth[i]!, smooth[i + 1]!, smooth[i + 2]!));
      }
  reds.sort((a, b) => a - b);
  const skin = reds[Math.floor(reds.length / 2)]!;
  const lips = reds[Math.floor(reds.length * 0.99)]!;
  const from = skin + 0.6 * (lips - skin);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      if (!inMouthArea(x, y)) continue;
      const i = (y * width + x) * 3;
      const w = Math.min(1, Math.max(0, (redness(smooth[i]!, smooth[i + 1]!, smooth[i + 2]!) - from) / (lips - from)));
      data[i] = data[i]! * (1 - 0.08 * w);
      data[i + 1] = data[i + 1]! * (1 - 0.5 * w);
      data[i + 2] = data[i + 2]! * (1 - 0.35 * w);
    }
  return new Uint8Array(
    await sharp(data, { raw: { width, height, channels: 3 } })
      .png()
      .toBuffer(),
  );
}
