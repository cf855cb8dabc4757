// The built-in talking head, frame by frame, on the astronaut's real framing and landmarks,
// its assets fetched over HTTP as a session fetches them. Lip sync is judged on real speech
// (espeak-ng at 48 kHz, fed 40 ms at a time as the avatar runner does).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { VideoBufferType, VideoFrame } from '@livekit/rtc-node';
import { mapMouth, mouthTables, poseMouth } from '../../../agent/pipelines/builtin/mouth.ts';
import { NEUTRAL_POSE } from '../../../agent/pipelines/builtin/pose.ts';
import { FaceWarp, i420Length } from '../../../agent/pipelines/builtin/warp.ts';
import { interpolate, toImage } from '../../../src/contract/face-rig.ts';
import { buildFaceRig } from '../../../src/pipelines/builtin/face-rig.ts';
import { recordingLogger } from '../../support/agent-log.ts';
import { espeak } from '../../support/fakes/speech.ts';
import { FRAME_SIZES, type Shape } from './face.ts';
import {
  type Box,
  darkPixels,
  eyeBoxes,
  luma,
  maxDifference,
  meanDifference,
  mouthBox,
  pearson,
  rms,
} from './measure.ts';
import { posedFace } from './posed-face.ts';
import { type ServedFace, serveFace, talkingHead } from './served-face.ts';

const SLICE = 1920; // 40 ms at 48 kHz
const FRAME_MS = 40;
const SILENCE = new Int16Array(SLICE);

let face: ServedFace;
let speech: Int16Array;

beforeAll(async () => {
  face = await serveFace('astronaut');
  ({ samples: speech } = await espeak(
    'The quick brown fox jumps over the lazy dog. Then, after a short pause, she smiled and said hello to everyone watching.',
    { sampleRate: 48_000 },
  ));
});

afterAll(async () => {
  await face?.stop();
});

/** The speech's slice for frame `index` (zero-padded at the end). */
function speechSlice(index: number): { audio: Int16Array; speechSamples: number } {
  const start = index * SLICE;
  const speechSamples = Math.max(0, Math.min(SLICE, speech.length - start));
  const audio = new Int16Array(SLICE);
  audio.set(speech.subarray(start, start + speechSamples));
  return { audio, speechSamples };
}

function iris(shape: Shape): Box[] {
  // The iris centres (FaceMesh 468 and 473), a few pixels around.
  return [468, 473].map((index) => {
    const [x, y] = face.framings[shape].landmarks[index]!;
    return { x0: Math.round(x - 3), x1: Math.round(x + 4), y0: Math.round(y - 3), y1: Math.round(y + 4) };
  });
}

function meanLuma(plane: Uint8Array, width: number, box: Box): number {
  let sum = 0;
  for (let y = box.y0; y < box.y1; y++) for (let x = box.x0; x < box.x1; x++) sum += plane[y * width + x]!;
  return sum / ((box.x1 - box.x0) * (box.y1 - box.y0));
}

describe('the talking head', () => {
  test.each(['portrait', 'landscape'] as const)('draws %s I420 frames of the photo itself', async (shape) => {
    const renderer = talkingHead(face, shape, { headMotion: false });
    await renderer.prepare();
    const { width, height } = FRAME_SIZES[shape];
    expect(renderer.size).toEqual({ width, height });
    const frame = renderer.nextFrame({ audio: SILENCE, speechSamples: 0, elapsedMs: 0 });
    expect(frame.type).toBe(VideoBufferType.I420);
    expect([frame.width, frame.height]).toEqual([width, height]);
    expect(frame.data.length).toBe(width * height + 2 * (width / 2) * (height / 2));
    // The framing's own pixels, not a drawing: the photo converted to I420 matches.
    const framing = face.framings[shape];
    const photo = new VideoFrame(framing.rgba, width, height, VideoBufferType.RGBA).convert(VideoBufferType.I420).data;
    const whole = { x0: 0, y0: 0, x1: width, y1: height };
    expect(maxDifference(luma(frame), photo, width, whole)).toBeLessThanOrEqual(1);
  });

  test.each(['portrait', 'landscape'] as const)(
    '%s: the mouth opens with the voice, in step with it',
    async (shape) => {
      const renderer = talkingHead(face, shape, { headMotion: false });
      await renderer.prepare();
      const { width } = renderer.size;
      const box = mouthBox(face.framings[shape]);
      const neutral = luma(renderer.nextFrame({ audio: SILENCE, speechSamples: 0, elapsedMs: 0 }));
      // The mouth's change is measured against the closed (neutral) mouth: how open it is, which
      // is what loudness drives. Frame to frame, the change follows the loudness's change.
      const energy: number[] = [];
      const opened: number[] = [];
      const moved: number[] = [];
      const energyChange: number[] = [];
      let previous = neutral;
      const frames = Math.ceil(speech.length / SLICE);
      for (let i = 0; i < frames; i++) {
        const { audio, speechSamples } = speechSlice(i);
        const frame = luma(renderer.nextFrame({ audio, speechSamples, elapsedMs: (i + 1) * FRAME_MS }));
        energy.push(rms(audio, speechSamples));
        energyChange.push(Math.abs(energy[i]! - (energy[i - 1] ?? 0)));
        opened.push(meanDifference(frame, neutral, width, box));
        moved.push(meanDifference(frame, previous, width, box));
        previous = frame;
      }
      const r = pearson(opened, energy);
      expect(r).toBeGreaterThanOrEqual(0.6);
      expect(pearson(moved, energyChange)).toBeGreaterThanOrEqual(0.6);
      // Frame-locked: the mouth matches the audio that goes out with its frame better than the
      // audio a frame or more before or after it.
      for (const lag of [-3, -2, -1, 1, 2, 3]) {
        const a = lag > 0 ? opened.slice(lag) : opened.slice(0, lag);
        const b = lag > 0 ? energy.slice(0, -lag) : energy.slice(-lag);
        expect(pearson(a, b)).toBeLessThan(r);
      }
      // And it does open: wide on loud syllables.
      expect(Math.max(...opened)).toBeGreaterThan(15);
    },
  );

  test('the mouth stays closed in silence and closes in the very frame the speech stops', async () => {
    const renderer = talkingHead(face, 'portrait', { headMotion: false });
    await renderer.prepare();
    const { width } = renderer.size;
    const box = mouthBox(face.framings.portrait);
    const neutral = luma(renderer.nextFrame({ audio: SILENCE, speechSamples: 0, elapsedMs: 0 }));
    let frame = 1;
    // Two seconds of listening.
    for (; frame < 50; frame++) {
      const silent = luma(renderer.nextFrame({ audio: SILENCE, speechSamples: 0, elapsedMs: frame * FRAME_MS }));
      expect(maxDifference(silent, neutral, width, box)).toBeLessThanOrEqual(2);
    }
    // Speech, cut (an interruption) on the loudest frame of its first second.
    let loudest = 0;
    for (let i = 1; i < 25; i++) if (rms(speechSlice(i).audio) > rms(speechSlice(loudest).audio)) loudest = i;
    let open = 0;
    for (let i = 0; i <= loudest; i++, frame++) {
      const talking = luma(renderer.nextFrame({ ...speechSlice(i), elapsedMs: frame * FRAME_MS }));
      open = meanDifference(talking, neutral, width, box);
    }
    expect(open).toBeGreaterThan(10);
    const stopped = luma(renderer.nextFrame({ audio: SILENCE, speechSamples: 0, elapsedMs: frame * FRAME_MS }));
    expect(maxDifference(stopped, neutral, width, box)).toBeLessThanOrEqual(2);
  });

  test('blinks every 2 to 6 s, the eyes shut at the middle of each and open otherwise', async () => {
    const renderer = talkingHead(face, 'portrait', { headMotion: false });
    await renderer.prepare();
    const { width } = renderer.size;
    const framing = face.framings.portrait;
    const eyes = eyeBoxes(framing);
    const irises = iris('portrait');
    const neutral = luma(renderer.nextFrame({ audio: SILENCE, speechSamples: 0, elapsedMs: 0 }));
    const openIris = irises.map((box) => meanLuma(neutral, width, box));
    const openDark = eyes.map((box) => darkPixels(neutral, width, box, 60));
    expect(Math.min(...openDark)).toBeGreaterThan(20); // the test can see an iris to lose
    // A minute of listening.
    const blinks: Array<{ start: number; frames: Uint8Array[] }> = [];
    let previousBlinking = false;
    for (let i = 1; i < 60 * 25; i++) {
      const frame = luma(renderer.nextFrame({ audio: SILENCE, speechSamples: 0, elapsedMs: i * FRAME_MS }));
      const change = Math.max(...eyes.map((box) => meanDifference(frame, neutral, width, box)));
      const blinking = change > 1;
      if (blinking && !previousBlinking) blinks.push({ start: i * FRAME_MS, frames: [] });
      if (blinking) blinks.at(-1)!.frames.push(frame);
      // Open eyes are the photo's, to the pixel.
      else expect(change).toBe(0);
      previousBlinking = blinking;
    }
    expect(blinks.length).toBeGreaterThanOrEqual(10);
    expect(blinks.length).toBeLessThanOrEqual(30);
    expect(blinks[0]!.start).toBeLessThanOrEqual(6_000);
    for (let b = 1; b < blinks.length; b++) {
      const interval = blinks[b]!.start - blinks[b - 1]!.start;
      expect(interval).toBeGreaterThanOrEqual(2_000 - FRAME_MS);
      expect(interval).toBeLessThanOrEqual(6_000 + FRAME_MS);
    }
    for (const blink of blinks) {
      // About 150 ms.
      expect(blink.frames.length * FRAME_MS).toBeGreaterThanOrEqual(120);
      expect(blink.frames.length * FRAME_MS).toBeLessThanOrEqual(200);
      // The middle frame: the iris is gone under skin, hardly any dark pixel is left in either
      // eye. (The lower eye of this photo, the head a little tilted, once kept 20 of its 156, a strip of iris and
      // white under the closed lid, where the mouth's reach took its lower lid: 13 %.)
      const middle = blink.frames.reduce((a, b) =>
        eyes.reduce((s, box) => s + darkPixels(a, width, box, 60), 0) <=
        eyes.reduce((s, box) => s + darkPixels(b, width, box, 60), 0)
          ? a
          : b,
      );
      irises.forEach((box, e) => expect(meanLuma(middle, width, box)).toBeGreaterThan(openIris[e]! + 50));
      eyes.forEach((box, e) =>
        expect({ eye: e, dark: darkPixels(middle, width, box, 60) <= openDark[e]! * 0.05 }).toEqual({
          eye: e,
          dark: true,
        }),
      );
    }
  });

  test('idle frames breathe and sway, while the background far from the face stays still', async () => {
    const renderer = talkingHead(face, 'portrait');
    await renderer.prepare();
    const { width, height } = renderer.size;
    const framing = face.framings.portrait;
    const [forehead, chin] = [framing.landmarks[10]!, framing.landmarks[152]!];
    const centre = [(forehead[0] + chin[0]) / 2, (forehead[1] + chin[1]) / 2] as const;
    const faceHeight = Math.hypot(chin[0] - forehead[0], chin[1] - forehead[1]);
    const first = luma(renderer.nextFrame({ audio: SILENCE, speechSamples: 0, elapsedMs: 0 }));
    const faceBox = {
      x0: Math.round(centre[0] - faceHeight / 3),
      x1: Math.round(centre[0] + faceHeight / 3),
      y0: Math.round(centre[1] - faceHeight / 2),
      y1: Math.round(centre[1] + faceHeight / 2),
    };
    let most = 0;
    for (let i = 1; i < 5 * 25; i++) {
      const talking = i >= 75 ? speechSlice(i - 75) : { audio: SILENCE, speechSamples: 0 };
      const frame = luma(renderer.nextFrame({ ...talking, elapsedMs: i * FRAME_MS }));
      most = Math.max(most, meanDifference(frame, first, width, faceBox));
      // Farther than 1.6 face heights from the face's centre: untouched.
      let moved = 0;
      for (let y = 0; y < height; y += 2) {
        for (let x = 0; x < width; x += 2) {
          if (
            Math.hypot(x - centre[0], y - centre[1]) > 1.6 * faceHeight &&
            frame[y * width + x] !== first[y * width + x]
          )
            moved++;
        }
      }
      expect(moved).toBe(0);
    }
    // The head moves by a pixel or more: the face's pixels change visibly.
    expect(most).toBeGreaterThan(2);
  });

  test('without its assets the session still streams, a plain picture, and says why', async () => {
    const logger = recordingLogger();
    const renderer = talkingHead(face, 'portrait', {
      assets: { ...face.assets, 'portrait.rig': face.assets['portrait.rig']!.replace('portrait.rig', 'missing.rig') },
      logger,
    });
    await renderer.prepare();
    const frame = renderer.nextFrame({ audio: SILENCE, speechSamples: 0, elapsedMs: 0 });
    expect([frame.width, frame.height]).toEqual([540, 960]);
    expect(new Set(frame.data.subarray(0, 540 * 960))).toEqual(new Set([72]));
    const [warning] = logger.lines;
    expect(warning).toMatchObject({ level: 'warn', msg: 'the face could not be loaded; streaming a plain picture' });
    expect(String(warning!.err)).toContain('404');
  });

  test("the lower teeth rise from behind the lower lip on wide openings only; pressing hides the photo's teeth", async () => {
    const framing = face.framings.portrait;
    const { rig, base, draw } = posedFace(framing);
    // Just above the lower lip's edge at the mouth's middle, as the lip drops for `open`.
    const split = rig.mouth.split.reduce((best, p) => (Math.abs(p[0]) < Math.abs(best[0]) ? p : best))[1];
    const aboveLowerLip = (open: number) => {
      const [x, y] = toImage(rig.mouth, [0, split + open * rig.mouth.maxOpen - 1.5]);
      return draw({ open })[Math.round(y) * framing.width + Math.round(x)]!;
    };
    expect(aboveLowerLip(1)).toBeGreaterThan(aboveLowerLip(0.35) + 40);
    // Pressed, the middle of the photo's teeth (between the inner lip lines) turns to lip: red (I420's V plane).
    const inner = rig.mouth.inner!.reduce((best, p) => (Math.abs(p[0]) < Math.abs(best[0]) ? p : best))[1];
    const [tx, ty] = toImage(rig.mouth, [0, (inner + split) / 2]).map(Math.round) as [number, number];
    const chromaWidth = framing.width >> 1;
    const red = (frame: Uint8Array) =>
      frame[
        framing.width * framing.height + chromaWidth * (framing.height >> 1) + (ty >> 1) * chromaWidth + (tx >> 1)
      ]!;
    const teeth = base[ty * framing.width + tx]!;
    const pressed = draw({ press: 1 });
    // (Her lips are light and pink: darker and redder than her teeth, not by much.)
    expect(pressed[ty * framing.width + tx]!).toBeLessThan(teeth - 10);
    expect(red(pressed)).toBeGreaterThan(red(base as Uint8Array) + 6);
    expect(draw({ press: 0 })[ty * framing.width + tx]!).toBe(teeth);
  });

  test('wide open, the inside shows across the middle of the lips and not at their corners', () => {
    // Open to the corners themselves, a smile's upturned parting line drew a thin dark horn at
    // each end (seen on a tilted photo a visitor received; docs/avatar-speaking.png's "a").
    const { rig } = buildFaceRig(face.framings.portrait);
    const mouth = mouthTables(rig);
    poseMouth(mouth, rig.mouth.maxOpen, 0, 0);
    const one = () => new Float32Array(1);
    const [sx, sy, alpha, tu, tv] = [one(), one(), one(), one(), one()];
    /** Whether the mouth's inside shows at (u, v) of the mouth's frame, wide open. */
    const inside = (u: number, v: number) => {
      [sx[0], sy[0]] = toImage(rig.mouth, [u, v]);
      mapMouth(mouth, rig.mouth.maxOpen, 0, 64, 1, sx, sy, alpha, tu, tv);
      return alpha[0]! > 0;
    };
    const [left, right] = rig.mouth.corners;
    const showing = (from: number, to: number) => {
      const seen: number[] = [];
      for (const corner of [left, right]) {
        for (let share = from; share <= to + 1e-9; share += 0.01) {
          const u = share * corner;
          const split = interpolate(rig.mouth.split, u);
          for (let dv = -2; dv <= 4; dv += 0.5) if (inside(u, split + dv)) seen.push(Math.round(100 * share));
        }
      }
      return seen;
    };
    expect(showing(0, 0.6).length).toBeGreaterThan(100);
    expect(showing(0.88, 1)).toEqual([]);
  });

  test("the cheeks beside the mouth and the nostrils follow the jaw down a little; the nose above and the face's sides stay", () => {
    const framing = face.framings.portrait;
    const { rig, textures } = buildFaceRig(framing);
    const { width, height } = framing;
    const mouth = rig.mouth;
    // A photo whose luma is its row (near the mouth): how far a pixel moved down reads off directly.
    const ramp = new Uint8Array(i420Length(width, height)).fill(128);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++)
        ramp[y * width + x] = Math.max(0, Math.min(255, Math.round(y - mouth.origin[1] + 128)));
    const warp = new FaceWarp(rig, ramp, textures.mouth);
    const out = new Uint8Array(i420Length(width, height));
    warp.paintBase(out);
    warp.render({ ...NEUTRAL_POSE, open: 1 }, out);
    const movedDown = (u: number, v: number) => {
      const [x, y] = toImage(mouth, [u, v]).map(Math.round) as [number, number];
      return ramp[y * width + x]! - out[y * width + x]!;
    };
    for (const corner of mouth.corners) {
      expect(movedDown(1.08 * corner, -5)).toBeGreaterThanOrEqual(2); // beside the corner, above the parting line
      expect(movedDown(1.2 * corner, 0)).toBeGreaterThanOrEqual(1);
      expect(movedDown(1.08 * corner, mouth.nose)).toBe(0); // up at the nose: still
      expect(movedDown(2 * corner, 0)).toBe(0); // out toward the face's side: still
    }
    // The nostrils' base, a little (a share of the drop), neither the nose above it nor the lip below.
    const philtrum = mouth.split.reduce((best, p) => (Math.abs(p[0]) < Math.abs(best[0]) ? p : best))[1] - mouth.nose;
    expect(movedDown(0, mouth.nose)).toBeGreaterThanOrEqual(1);
    expect(movedDown(0, mouth.nose)).toBeLessThanOrEqual(0.1 * mouth.maxOpen);
    expect(movedDown(0, mouth.nose - 1.1 * philtrum)).toBe(0);
    expect(movedDown(mouth.corners[1], mouth.nose - 0.5 * philtrum)).toBe(0); // beside the nose's wings
  });
});
