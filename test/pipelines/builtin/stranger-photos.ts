// Photos nobody tuned the renderer for: real faces cut from the sample screenshots
// @vladmandic/human ships (MIT, read from node_modules at test time, not committed: eight of
// the nine) and the repo's own astronaut, posed the ways visitors' photos come: smiling with teeth, the head
// tilted 15–30° either way, small in a desktop-shaped frame, glasses, stubble, dim light.
// Each is what a visitor would upload: PNG bytes, deterministic, made with sharp.
import { join } from 'node:path';
import sharp from 'sharp';
import { portraitPng } from '../../fixtures/index.ts';

export type StrangerPhoto =
  | 'smiling-tilted-left'
  | 'smiling-tilted-right'
  | 'astronaut-small-tilted'
  | 'glasses'
  | 'stubble'
  | 'smiling-man'
  | 'dim'
  | 'small'
  | 'tilted-far';

export const STRANGER_PHOTOS: StrangerPhoto[] = [
  'smiling-tilted-left',
  'smiling-tilted-right',
  'astronaut-small-tilted',
  'glasses',
  'stubble',
  'smiling-man',
  'dim',
  'small',
  'tilted-far',
];

const ASSETS = join(import.meta.dir, '../../../node_modules/@vladmandic/human/assets');
/** 800×718: five face tiles, 150 px, in a row at y 346 ("hover or click on face"). */
export const FACE_DETECT = join(ASSETS, 'screenshot-facedetect.jpg');
/** 1920×954: a grid of extracted faces, ~100 px tiles, 106.67 px apart. */
export const FACE_MATCH = join(ASSETS, 'screenshot-facematch.jpg');

export interface Region {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** One tile of the face-detect screenshot's row (0–4). */
export function detectTile(index: number): Region {
  return { left: [10, 166, 322, 479, 633][index]!, top: 348, width: 146, height: 146 };
}

/** One tile of the face-match grid (row 0–5 under the header, column 0–17); the bottom label cut off. */
function matchTile(row: number, column: number): Region {
  return { left: Math.round(6 + 106.67 * column), top: Math.round(288 + 107.5 * row), width: 98, height: 90 };
}

export interface Pose {
  /** Degrees, clockwise as seen. */
  tilt: number;
  /** The face's tile scaled to this width before it is placed. */
  width: number;
  /** The photo (a desktop screenshot's shape unless said). */
  canvas?: { width: number; height: number };
  /** Where the tile's centre goes, as fractions of the canvas. */
  at?: [number, number];
  /** Multiplies every channel (below 1 for dim light). */
  light?: number;
  background?: string;
}

export async function posed(source: Uint8Array | string, region: Region | null, pose: Pose): Promise<Uint8Array> {
  const background = pose.background ?? '#6f7379';
  const canvas = pose.canvas ?? { width: 960, height: 600 };
  let image = sharp(source);
  if (region) image = image.extract(region);
  // The tile's edge spread outwards first, so the cut-out's border is not a hard frame round the face.
  const tile = await sharp(await image.resize({ width: pose.width }).png().toBuffer())
    .extend({ top: 24, bottom: 24, left: 24, right: 24, extendWith: 'mirror' })
    .rotate(pose.tilt, { background })
    .png()
    .toBuffer();
  const { width = 0, height = 0 } = await sharp(tile).metadata();
  const [fx, fy] = pose.at ?? [0.5, 0.42];
  let photo = sharp({ create: { ...canvas, channels: 3, background } }).composite([
    {
      input: tile,
      left: Math.round(Math.min(canvas.width - width, Math.max(0, fx * canvas.width - width / 2))),
      top: Math.round(Math.min(canvas.height - height, Math.max(0, fy * canvas.height - height / 2))),
    },
  ]);
  if (pose.light !== undefined)
    photo = sharp(await photo.png().toBuffer())
      .linear(pose.light, 0)
      .gamma(1.4);
  return new Uint8Array(await photo.png().toBuffer());
}

const RECIPES: Record<StrangerPhoto, () => Promise<Uint8Array>> = {
  // A young woman smiling wide, teeth showing, the head tilted 25° to her left.
  'smiling-tilted-left': () => posed(FACE_DETECT, detectTile(3), { tilt: 25, width: 300 }),
  // A greyscale studio portrait, a wide smile, tilted 22° the other way.
  'smiling-tilted-right': () => posed(FACE_DETECT, detectTile(4), { tilt: -22, width: 300, at: [0.4, 0.45] }),
  // The NASA portrait (smiling, teeth showing) tilted 18° and small in a desktop frame.
  'astronaut-small-tilted': () =>
    posed(portraitPng(), null, { tilt: -18, width: 340, canvas: { width: 1280, height: 800 }, at: [0.6, 0.45] }),
  // A man in sunglasses, smiling.
  glasses: () => posed(FACE_MATCH, matchTile(1, 1), { tilt: 0, width: 260 }),
  // A man with stubble.
  stubble: () => posed(FACE_MATCH, matchTile(0, 0), { tilt: 16, width: 240 }),
  // A man smiling broadly, teeth showing.
  'smiling-man': () => posed(FACE_MATCH, matchTile(1, 5), { tilt: -15, width: 240 }),
  // A woman smiling with teeth in a dim room: everything at 45 % and the shadows crushed.
  dim: () => posed(FACE_MATCH, matchTile(2, 3), { tilt: 10, width: 260, light: 0.45, background: '#3a3d42' }),
  // A man in an open collar, small in a desktop frame: his face about 100 px tall in 1280×800.
  // A woman with a closed-lipped smile, the head tilted 28° to her right.
  'tilted-far': () => posed(FACE_DETECT, detectTile(1), { tilt: -28, width: 280, at: [0.45, 0.45] }),
  small: () =>
    posed(FACE_DETECT, detectTile(0), { tilt: 0, width: 160, canvas: { width: 1280, height: 800 }, at: [0.55, 0.4] }),
};

const made = new Map<StrangerPhoto, Promise<Uint8Array>>();

/** One stranger's photo as uploaded (PNG bytes); made once per process. */
export function strangerPhoto(name: StrangerPhoto): Promise<Uint8Array> {
  let bytes = made.get(name);
  if (!bytes) {
    bytes = RECIPES[name]();
    made.set(name, bytes);
  }
  return bytes;
}

/** All of them, by name. */
export async function strangerPhotos(): Promise<Record<StrangerPhoto, Uint8Array>> {
  const entries = await Promise.all(STRANGER_PHOTOS.map(async (name) => [name, await strangerPhoto(name)] as const));
  return Object.fromEntries(entries) as Record<StrangerPhoto, Uint8Array>;
}
