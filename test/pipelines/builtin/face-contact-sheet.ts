// Writes docs/face-contact-sheet.png: each stranger's photo (stranger-photos.ts), trained as
// an upload is, its mouth neutral, at a mid opening and at half and full "a", cropped round
// the mouth and enlarged so the inside's shading shows. Needs nothing but node_modules:
//   bun test/pipelines/builtin/face-contact-sheet.ts [out.png]
import { join } from 'node:path';
import sharp from 'sharp';
import { heldFrames, type RgbFrame, serveStranger } from './stranger-face.ts';
import { STRANGER_PHOTOS } from './stranger-photos.ts';

const OUT = process.argv[2] ?? join(import.meta.dir, '..', '..', '..', 'docs', 'face-contact-sheet.png');
const COLUMNS = ['neutral', 'mid', 'open half', 'open wide'];
const TILE = { width: 240, height: 200 };
const LABEL = { width: 190, height: 28 };

const tiles: Array<{ input: Buffer; left: number; top: number }> = [];
for (const [label, c] of COLUMNS.map((l, c) => [l, c] as const))
  tiles.push({ input: text(label, TILE.width, LABEL.height), left: LABEL.width + c * TILE.width, top: 0 });
let row = 0;
for (const name of STRANGER_PHOTOS) {
  const face = await serveStranger(name);
  try {
    const { neutral, spoken } = await heldFrames(
      face,
      (await import('./stranger-face.ts')).HELD_SHAPES.filter(({ label }) => COLUMNS.includes(label)),
    );
    const rig = face.rigs.portrait;
    const mouthWidth = rig.mouth.corners[1] - rig.mouth.corners[0];
    // The mouth and the chin below it, at 1.2:1.
    const w = Math.round(2.2 * mouthWidth);
    const h = Math.round((w * TILE.height) / TILE.width);
    const crop = {
      left: Math.max(0, Math.round(rig.mouth.origin[0] - w / 2)),
      top: Math.max(0, Math.round(rig.mouth.origin[1] - 0.42 * h)),
      width: w,
      height: h,
    };
    const top = LABEL.height + row * TILE.height;
    tiles.push({ input: text(name, LABEL.width, TILE.height), left: 0, top });
    const frames: RgbFrame[] = [neutral, ...spoken.map(({ frame }) => frame)];
    for (const [c, frame] of frames.entries()) {
      const input = await sharp(Buffer.from(frame.rgba), {
        raw: { width: frame.width, height: frame.height, channels: 4 },
      })
        .extract({
          ...crop,
          width: Math.min(crop.width, frame.width - crop.left),
          height: Math.min(crop.height, frame.height - crop.top),
        })
        .resize(TILE)
        .png()
        .toBuffer();
      tiles.push({ input, left: LABEL.width + c * TILE.width, top });
    }
  } finally {
    await face.stop();
  }
  row++;
}
await sharp({
  create: {
    width: LABEL.width + COLUMNS.length * TILE.width,
    height: LABEL.height + row * TILE.height,
    channels: 3,
    background: '#111',
  },
})
  .composite(tiles)
  .png()
  .toFile(OUT);
console.log(`wrote ${OUT}`);
process.exit(0);

function text(label: string, width: number, height: number): Buffer {
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#111"/>` +
      `<text x="8" y="${Math.min(height - 8, 20)}" font-family="sans-serif" font-size="15" fill="#eee">${label}</text></svg>`,
  );
}
