// Writes the sample frames docs/ shows (neutral, mouth open, blink): the astronaut's portrait
// framing through the talking head as a session draws it (head motion on), over real speech
// and then listening.
//   bun test/pipelines/builtin/sample-frames.ts
import { join } from 'node:path';
import { VideoBufferType, VideoFrame } from '@livekit/rtc-node';
import sharp from 'sharp';
import { espeak } from '../../support/fakes/speech.ts';
import { darkPixels, eyeBoxes, luma, meanDifference, mouthBox } from './measure.ts';
import { serveFace, talkingHead } from './served-face.ts';

const DOCS = join(import.meta.dir, '..', '..', '..', 'docs');
const SLICE = 1920;

const face = await serveFace('astronaut');
try {
  const renderer = talkingHead(face, 'portrait');
  await renderer.prepare();
  const { width, height } = renderer.size;
  const framing = face.framings.portrait;
  const silence = new Int16Array(SLICE);
  let elapsed = 0;
  const next = (audio: Int16Array, speechSamples: number) => renderer.nextFrame({ audio, speechSamples, elapsedMs: 40 * elapsed++ });
  const save = (frame: VideoFrame, name: string) => {
    const rgba = new VideoFrame(new Uint8Array(frame.data), width, height, VideoBufferType.I420).convert(VideoBufferType.RGBA).data;
    return sharp(rgba, { raw: { width, height, channels: 4 } }).png().toFile(join(DOCS, name));
  };

  const first = next(silence, 0);
  const neutral = luma(first);
  await save(first, 'avatar-neutral.png');

  // The widest mouth over a spoken sentence.
  const { samples } = await espeak('Hello! I am glad you came. What would you like to know about flying to space?', { sampleRate: 48_000 });
  const mouth = mouthBox(framing);
  let widest = { open: -1, frame: new Uint8Array() };
  for (let at = 0; at < samples.length; at += SLICE) {
    const audio = new Int16Array(SLICE);
    const speechSamples = Math.min(SLICE, samples.length - at);
    audio.set(samples.subarray(at, at + speechSamples));
    const frame = next(audio, speechSamples);
    const open = meanDifference(luma(frame), neutral, width, mouth);
    if (open > widest.open) widest = { open, frame: new Uint8Array(frame.data) };
  }
  await save(new VideoFrame(widest.frame, width, height, VideoBufferType.I420), 'avatar-mouth-open.png');

  // The first blink's middle: the frame with the fewest dark (iris) pixels in the eyes.
  const eyes = eyeBoxes(framing);
  let shut = { dark: Infinity, frame: new Uint8Array() };
  for (let i = 0; i < 8 * 25; i++) {
    const frame = next(silence, 0);
    const dark = eyes.reduce((sum, box) => sum + darkPixels(luma(frame), width, box, 60), 0);
    if (dark < shut.dark) shut = { dark, frame: new Uint8Array(frame.data) };
  }
  await save(new VideoFrame(shut.frame, width, height, VideoBufferType.I420), 'avatar-blink.png');
  console.log(`wrote ${['avatar-neutral.png', 'avatar-mouth-open.png', 'avatar-blink.png'].map((name) => join(DOCS, name)).join(', ')}`);
} finally {
  await face.stop();
}
process.exit(0);
