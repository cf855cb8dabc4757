// Issue 46's survey: every smile photo (test/pipelines/builtin/smile-photos.ts) trained as an
// upload is, rendered neutral and at each held shape, and checked by lip colour for a "second
// mouth" (a dark crescent inside the lower lip, under a band of lip: lower-lip-colour.ts).
// Prints a table (second-mouth pixels per shape, the worst) and how many faces fail, and
// writes a contact sheet: each face at rest, at the widest opening, at its worst shape, and
// the check's mask there (grey lower lip, blue opened, yellow band, red second mouth).
//   bun bench/renderer/smiles.ts [out.png] [--only <name substring>]
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import {
  NOISE_PIXELS,
  NOISE_SHARE,
  type SecondMouthCount,
  secondMouthVerdict,
} from '../../test/pipelines/builtin/lower-lip-colour.ts';
import { SMILE_PHOTOS, smilePhoto } from '../../test/pipelines/builtin/smile-photos.ts';
import { HELD_SHAPES, heldFrames, type RgbFrame, serveUpload } from '../../test/pipelines/builtin/stranger-face.ts';

const { values, positionals } = parseArgs({ options: { only: { type: 'string' } }, allowPositionals: true });
const OUT = positionals[0] ?? join(import.meta.dir, '..', '..', 'docs', 'smiles-contact-sheet.jpg');
const TILE = { width: 240, height: 200 };
const LABEL = { width: 250, height: 28 };
const COLUMNS = ['neutral', 'open wide', 'worst', 'check (worst)'];

const names = SMILE_PHOTOS.filter((name) => !values.only || name.includes(values.only));
const tiles: Array<{ input: Buffer; left: number; top: number }> = COLUMNS.map((label, c) => ({
  input: text(label, TILE.width, LABEL.height),
  left: LABEL.width + c * TILE.width,
  top: 0,
}));
const rows: string[] = [];
let failing = 0;
let row = 0;
console.log(
  ['face', 'lower lip', ...HELD_SHAPES.map(({ label }) => label), 'worst', 'teeth', 'dark above teeth', 'verdict'].join(
    '\t',
  ),
);
for (const name of names) {
  let face: Awaited<ReturnType<typeof serveUpload>>;
  try {
    face = await serveUpload(await smilePhoto(name));
  } catch (error) {
    console.log(`${name}\tnot trained: ${(error as Error).message}`);
    continue;
  }
  try {
    const { neutral, spoken } = await heldFrames(face);
    const mouth = face.rigs.portrait.mouth;
    const width = mouth.corners[1] - mouth.corners[0];
    const { counts, worst, unmeasured, fails, aboveTeeth } = secondMouthVerdict(
      neutral,
      spoken.map(({ frame }) => frame),
      mouth,
    );
    if (fails) failing++;
    const verdict = fails ? 'FAIL' : unmeasured ? `skipped (${unmeasured})` : 'ok';
    const line = [
      name,
      counts[0]!.lowerLip,
      ...counts.map((c) => c.secondMouth),
      counts[worst]!.secondMouth,
      counts[0]!.teeth,
      aboveTeeth,
      verdict,
    ];
    console.log(line.join('\t'));
    rows.push(line.join('\t'));
    await addRow(name, verdict, neutral, spoken, worst, counts[worst]!, mouth.origin, width);
  } finally {
    await face.stop();
  }
}
console.log(
  `${failing} of ${rows.length} faces show a second mouth or an opening above their teeth (over ${NOISE_SHARE * 100} % of the lip, ${NOISE_PIXELS} px at least)`,
);
await sharp({
  create: {
    width: LABEL.width + COLUMNS.length * TILE.width,
    height: LABEL.height + row * TILE.height,
    channels: 3,
    background: '#111',
  },
})
  .composite(tiles)
  .toFormat(OUT.endsWith('.png') ? 'png' : 'jpeg', { quality: 80 })
  .toFile(OUT);
console.log(`wrote ${OUT}`);
process.exit(0);

async function addRow(
  name: string,
  verdict: string,
  neutral: RgbFrame,
  spoken: Awaited<ReturnType<typeof heldFrames>>['spoken'],
  worst: number,
  count: SecondMouthCount,
  [cx, cy]: [number, number],
  mouthWidth: number,
): Promise<void> {
  const top = LABEL.height + row * TILE.height;
  const label = `${name}\n${verdict}\nworst: ${spoken[worst]!.label} (${count.secondMouth} + ${count.aboveTeeth} px)`;
  tiles.push({ input: text(label, LABEL.width, TILE.height), left: 0, top });
  // The mouth and the chin below it, at 1.2:1, as face-contact-sheet.ts crops it.
  const w = Math.round(2.2 * mouthWidth);
  const h = Math.round((w * TILE.height) / TILE.width);
  const wide = spoken.find(({ label }) => label === 'open wide')!.frame;
  const frames = [neutral, wide, spoken[worst]!.frame];
  for (const [c, frame] of frames.entries()) {
    const left = Math.max(0, Math.round(cx - w / 2));
    const cropTop = Math.max(0, Math.round(cy - 0.42 * h));
    const input = await sharp(Buffer.from(frame.rgba), {
      raw: { width: frame.width, height: frame.height, channels: 4 },
    })
      .extract({
        left,
        top: cropTop,
        width: Math.min(w, frame.width - left),
        height: Math.min(h, frame.height - cropTop),
      })
      .resize(TILE)
      .png()
      .toBuffer();
    tiles.push({ input, left: LABEL.width + c * TILE.width, top });
  }
  const { mask } = count;
  const input = await sharp(Buffer.from(mask.rgba), { raw: { width: mask.width, height: mask.height, channels: 4 } })
    .resize({ ...TILE, fit: 'contain', background: '#000', kernel: 'nearest' })
    .flatten({ background: '#000' })
    .png()
    .toBuffer();
  tiles.push({ input, left: LABEL.width + 3 * TILE.width, top });
  row++;
}

function text(label: string, width: number, height: number): Buffer {
  const lines = label
    .split('\n')
    .map((line, i) => `<tspan x="8" y="${20 + 18 * i}">${line}</tspan>`)
    .join('');
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#111"/>` +
      `<text font-family="sans-serif" font-size="14" fill="#eee">${lines}</text></svg>`,
  );
}
