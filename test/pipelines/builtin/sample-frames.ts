// Writes docs/avatar-speaking.png: a contact sheet of one spoken passage, one frame per
// viseme class (and one blink), drawn as a session draws them: the offline Piper voice's
// phoneme timing through the avatar's speech queue, the talking head with head motion on.
// Rows: the fixture's smiling portrait (teeth showing) and a mirrored, tilted, smaller copy.
// Needs the offline models (`npm test` installs them once):
//   bun test/pipelines/builtin/sample-frames.ts
import { join } from 'node:path';
import { initializeLogger } from '@livekit/agents';
import { type AudioFrame, VideoBufferType, VideoFrame } from '@livekit/rtc-node';
import sharp from 'sharp';
import { AvatarSpeech } from '../../../agent/avatar/index.ts';
import { loadOfflineSpeech, OfflineTTS } from '../../../agent/providers/offline/index.ts';
import type { Viseme } from '../../../agent/visemes/index.ts';
import { loadProviders } from '../../../src/config.ts';
import type { Photo } from './face.ts';
import { serveFace, talkingHead } from './served-face.ts';

const OUT = join(import.meta.dir, '..', '..', '..', 'docs', 'avatar-speaking.png');
const PASSAGE =
  'Bob, please move your map of Paris over here. I think the capital of France is Paris, a beautiful old city on the river Seine.';
const SLICE = 1920;
const COLUMNS: Array<{ label: string; viseme?: Viseme }> = [
  { label: 'listening' },
  { label: 'm b p', viseme: 'closed' },
  { label: 'f v', viseme: 'lip-teeth' },
  { label: 's t d n', viseme: 'teeth' },
  { label: 'i e', viseme: 'spread' },
  { label: 'ə l r k', viseme: 'mid' },
  { label: 'a', viseme: 'open' },
  { label: 'o u w', viseme: 'round' },
  { label: 'blink' },
];
const TILE = { width: 200, height: 240 };
const LABEL_HEIGHT = 28;

initializeLogger({ pretty: false, level: 'warn' });
const server = await loadOfflineSpeech(loadProviders(process.env).modelsDir);
const spoken: AudioFrame[] = [];
for await (const audio of new OfflineTTS(server, 'espeak-ng', { language: 'en', profile: null }).synthesize(PASSAGE))
  spoken.push(audio.frame);
await server.close();

const rows: Buffer[][] = [];
for (const photo of ['astronaut', 'astronaut-tilted'] as Photo[]) rows.push(await row(photo));

const labels = COLUMNS.map(({ label }) =>
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${TILE.width}" height="${LABEL_HEIGHT}"><rect width="100%" height="100%" fill="#111"/>` +
      `<text x="50%" y="20" text-anchor="middle" font-family="sans-serif" font-size="16" fill="#eee">${label}</text></svg>`,
  ),
);
const composite = [
  ...labels.map((input, c) => ({ input, left: c * TILE.width, top: 0 })),
  ...rows.flatMap((tiles, r) =>
    tiles.map((input, c) => ({ input, left: c * TILE.width, top: LABEL_HEIGHT + r * TILE.height })),
  ),
];
await sharp({
  create: {
    width: COLUMNS.length * TILE.width,
    height: LABEL_HEIGHT + rows.length * TILE.height,
    channels: 3,
    background: '#111',
  },
})
  .composite(composite)
  .png()
  .toFile(OUT);
console.log(`wrote ${OUT}`);
process.exit(0);

/** One tile per column: the frame where that viseme most filled the slice (the loudest among equals). */
async function row(photo: Photo): Promise<Buffer[]> {
  const face = await serveFace(photo);
  try {
    const renderer = talkingHead(face, 'portrait');
    await renderer.prepare();
    const speech = new AvatarSpeech();
    for (const frame of spoken) await speech.captureFrame(frame);
    speech.flush();
    const best = new Map<string, { score: number; frame: Uint8Array }>();
    const keep = (label: string, score: number, frame: VideoFrame) => {
      if ((best.get(label)?.score ?? -1) < score) best.set(label, { score, frame: new Uint8Array(frame.data) });
    };
    const silence = new Int16Array(SLICE);
    let index = 0;
    keep('listening', 0, renderer.nextFrame({ audio: silence, speechSamples: 0, elapsedMs: 40 * index++ }));
    for (let slice = speech.take(SLICE); slice.speechSamples > 0; slice = speech.take(SLICE)) {
      const frame = renderer.nextFrame({
        audio: slice.samples,
        speechSamples: slice.speechSamples,
        visemes: slice.visemes,
        elapsedMs: 40 * index++,
      });
      let energy = 0;
      for (let i = 0; i < slice.speechSamples; i++) energy += slice.samples[i]! ** 2;
      const loudness = Math.sqrt(energy / slice.speechSamples) / 32768;
      for (const { label, viseme } of COLUMNS)
        if (viseme) keep(label, (slice.visemes?.[viseme] ?? 0) + 0.01 * loudness, frame);
    }
    // Listening until a blink has shut the eyes (blinks come every 2–6 s).
    const { width, height } = renderer.size;
    const eyes = face.framings.portrait.landmarks[159]!;
    let darkest = Infinity;
    for (let i = 0; i < 200; i++) {
      const frame = renderer.nextFrame({ audio: silence, speechSamples: 0, elapsedMs: 40 * index++ });
      const lid = frame.data[Math.round(eyes[1]) * width + Math.round(eyes[0])]!;
      // The upper lid's middle: skin (lighter than the iris) covers it when shut.
      if (-lid < darkest) {
        darkest = -lid;
        keep('blink', lid, frame);
      }
    }
    const mouth = face.rigs.portrait.mouth.origin;
    const crop = {
      left: Math.round(Math.min(width - 2 * TILE.width, Math.max(0, mouth[0] - TILE.width))),
      top: Math.round(Math.min(height - 2 * TILE.height, Math.max(0, mouth[1] - 1.45 * TILE.height))),
      width: 2 * TILE.width,
      height: 2 * TILE.height,
    };
    const tiles: Buffer[] = [];
    for (const { label } of COLUMNS) {
      const frame = best.get(label)!.frame;
      const rgba = new VideoFrame(frame, width, height, VideoBufferType.I420).convert(VideoBufferType.RGBA).data;
      tiles.push(
        await sharp(Buffer.from(rgba), { raw: { width, height, channels: 4 } })
          .extract(crop)
          .resize(TILE)
          .png()
          .toBuffer(),
      );
    }
    return tiles;
  } finally {
    await face.stop();
  }
}
