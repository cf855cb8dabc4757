// The "TEST" mark a test session's video carries (agent/avatar/test-mark.ts), drawn on frames
// in memory: a red box in the top-left corner, 7 % of the frame's height, whose white letters
// read T-E-S-T cell by cell; nothing else of the frame changes; marking again changes nothing
// (renderers reuse their buffers); it costs well under 0.2 ms on a 720p frame.
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { VideoBufferType, VideoFrame } from '@livekit/rtc-node';
import sharp from 'sharp';
import { TEST_MARK_BOX_RGB, TEST_MARK_LETTER_RGB, TestMark } from '../../agent/avatar/test-mark.ts';
import { StandinRenderer } from '../../agent/pipelines/standin/index.ts';
import { recordingLogger } from '../support/agent-log.ts';
import { EXPECTED_WORD, readMark } from './test-mark-reading.ts';

/**
 * A photo as an I420 frame of this size: the marked frames below are of something real. Its
 * top (her face, the backdrop) as a session's framing has it: a crop of her orange suit
 * beside the box would read as part of it.
 */
async function photoFrame(width: number, height: number): Promise<VideoFrame> {
  const rgba = await sharp(join(import.meta.dir, '../fixtures/astronaut.png'))
    .resize(width, height, { fit: 'cover', position: 'top' })
    .ensureAlpha()
    .raw()
    .toBuffer();
  const frame = new VideoFrame(new Uint8Array(rgba), width, height, VideoBufferType.RGBA);
  const i420 = frame.convert(VideoBufferType.I420);
  return new VideoFrame(new Uint8Array(i420.data), width, height, VideoBufferType.I420);
}

/** A mid-grey frame of a 4:2:0 layout (I420, NV12): 1.5 bytes a pixel, all 128. */
function midGrey(width: number, height: number, type: VideoBufferType): VideoFrame {
  return new VideoFrame(new Uint8Array((width * height * 3) / 2).fill(128), width, height, type);
}

function luma([r, g, b]: readonly number[]): number {
  return 16 + (65.481 * r! + 128.553 * g! + 24.966 * b!) / 255;
}

describe('the TEST mark', () => {
  for (const [width, height] of [
    [540, 960],
    [960, 540],
    [1280, 720],
  ] as const) {
    test(`${width}×${height}: a red box in the top-left corner, 6–8 % of the height, whose white letters read TEST`, async () => {
      const frame = await photoFrame(width, height);
      const before = new Uint8Array(frame.data);
      expect(readMark(before, width, height).box).toBeUndefined(); // the photo has no red box of its own
      const marked = new TestMark().apply(frame);
      expect(marked).toBe(frame); // in place: I420 is marked where it is

      const read = readMark(frame.data, width, height);
      expect(read.letters).toEqual(EXPECTED_WORD);
      const box = read.box!;
      const boxHeight = box.y1 - box.y0;
      expect(boxHeight / height).toBeGreaterThanOrEqual(0.06);
      expect(boxHeight / height).toBeLessThanOrEqual(0.08);
      expect(box.x0).toBeLessThan(0.05 * width);
      expect(box.y0).toBeLessThan(0.05 * height);
      expect(box.x0).toBeGreaterThan(0); // a margin: not glued to the edge
      // The colours: white letters, red box (luma as BT.601 puts them), high contrast.
      expect(read.inkLuma!).toBeGreaterThan(luma(TEST_MARK_LETTER_RGB) - 25); // cell middles: a little edge blur on small letters
      expect(Math.abs(read.boxLuma! - luma(TEST_MARK_BOX_RGB))).toBeLessThan(4);
      expect(read.inkLuma! - read.boxLuma!).toBeGreaterThan(110);
      // Letters are a good part of the box, not specks: bright pixels inside it, none around it.
      let inside = 0;
      let brightInside = 0;
      let changedOutside = 0;
      for (let y = 0; y < height; y++)
        for (let x = 0; x < width; x++) {
          const i = y * width + x;
          const inBox = x >= box.x0 && x < box.x1 && y >= box.y0 && y < box.y1;
          if (inBox) {
            inside++;
            if (frame.data[i]! >= 200) brightInside++;
          } else if (frame.data[i] !== before[i]) changedOutside++;
        }
      expect(brightInside / inside).toBeGreaterThan(0.1);
      expect(brightInside / inside).toBeLessThan(0.4);
      expect(changedOutside).toBe(0);
      // Chroma outside the box's 2×2 blocks is untouched too.
      const chromaStart = width * height;
      const chromaWidth = width / 2;
      let chromaChanged = 0;
      for (let i = chromaStart; i < before.length; i++) {
        const c = (i - chromaStart) % ((width / 2) * (height / 2));
        const cx = 2 * (c % chromaWidth);
        const cy = 2 * Math.floor(c / chromaWidth);
        const inBox = cx >= box.x0 - 1 && cx < box.x1 && cy >= box.y0 - 1 && cy < box.y1;
        if (!inBox && frame.data[i] !== before[i]) chromaChanged++;
      }
      expect(chromaChanged).toBe(0);
    });
  }

  test('an unmarked frame is left as it is; marking a marked frame again changes nothing', async () => {
    const frame = await photoFrame(540, 960);
    const original = new Uint8Array(frame.data);
    const mark = new TestMark();
    mark.apply(frame);
    const once = new Uint8Array(frame.data);
    expect(once).not.toEqual(original);
    for (let i = 0; i < 5; i++) mark.apply(frame);
    expect(new Uint8Array(frame.data)).toEqual(once);
    // A frame the mark was never applied to (a live session's) keeps every byte.
    const live = await photoFrame(540, 960);
    expect(new Uint8Array(live.data)).toEqual(original);
    expect(readMark(live.data, 540, 960).letters).toEqual([]);
  });

  test('the stand-in renderer’s frames, its buffer reused, carry the mark every time', async () => {
    const renderer = new StandinRenderer({
      identity: null,
      size: { width: 540, height: 960 },
      logger: recordingLogger(),
    });
    await renderer.prepare();
    const mark = new TestMark();
    for (let k = 0; k < 30; k++) {
      const frame = mark.apply(
        renderer.nextFrame({ audio: new Int16Array(1920), speechSamples: 0, elapsedMs: k * 40 }),
      );
      expect(readMark(frame.data, 540, 960).letters).toEqual(EXPECTED_WORD);
    }
  });

  test('RGBA, BGRA, ARGB and ABGR frames: the same mark in their byte order (as LiveKit converts them)', () => {
    for (const [type, order] of [
      [VideoBufferType.RGBA, [0, 1, 2, 3]],
      [VideoBufferType.BGRA, [2, 1, 0, 3]],
      [VideoBufferType.ARGB, [1, 2, 3, 0]],
      [VideoBufferType.ABGR, [3, 2, 1, 0]],
    ] as const) {
      const width = 960;
      const height = 540;
      const data = new Uint8Array(width * height * 4).fill(40);
      const frame = new VideoFrame(data, width, height, type);
      expect(new TestMark().apply(frame)).toBe(frame);
      // Its I420 reading, as LiveKit converts the layout: the same letters, on red. (rtc-node's
      // convert panics on ABGR, though publishing takes it: that one is put in RGBA order here.)
      const rgba = new Uint8Array(data.length);
      for (let i = 0; i < data.length; i += 4) for (let c = 0; c < 4; c++) rgba[i + c] = data[i + order[c]!]!;
      const i420 = (
        type === VideoBufferType.ABGR ? new VideoFrame(rgba, width, height, VideoBufferType.RGBA) : frame
      ).convert(VideoBufferType.I420);
      expect(readMark(i420.data, width, height).letters).toEqual(EXPECTED_WORD);
      // The box's colour at its middle left (padding, no letter there), in this layout's order.
      const box = readMark(i420.data, width, height).box!;
      const at = 4 * (Math.round((box.y0 + box.y1) / 2) * width + box.x0 + 4);
      expect(order.map((c) => data[at + c])).toEqual([...TEST_MARK_BOX_RGB, 255]);
    }
  });

  test('another layout (NV12): marked as an I420 copy', () => {
    const width = 540;
    const height = 960;
    const frame = midGrey(width, height, VideoBufferType.NV12);
    const marked = new TestMark().apply(frame);
    expect(marked.type).toBe(VideoBufferType.I420);
    expect(readMark(marked.data, width, height).letters).toEqual(EXPECTED_WORD);
  });

  test('a 720p frame is marked in well under 0.2 ms', () => {
    const width = 1280;
    const height = 720;
    const frame = midGrey(width, height, VideoBufferType.I420);
    const mark = new TestMark();
    const drawing = performance.now();
    mark.apply(frame); // the first frame of a size draws the mark
    const firstMs = performance.now() - drawing;
    const frames = 2_000;
    const started = performance.now();
    for (let i = 0; i < frames; i++) mark.apply(frame);
    const perFrameMs = (performance.now() - started) / frames;
    console.log(
      `TEST mark: ${(perFrameMs * 1000).toFixed(1)} µs per 1280×720 frame (the first, drawing it: ${firstMs.toFixed(1)} ms)`,
    );
    expect(perFrameMs).toBeLessThan(0.2);
  });

  test('a marked frame, written to /tmp/likeness-test-mark.png (to look at)', async () => {
    const frame = new TestMark().apply(await photoFrame(540, 960));
    const rgba = frame.convert(VideoBufferType.RGBA).data;
    await sharp(rgba, { raw: { width: 540, height: 960, channels: 4 } })
      .png()
      .toFile('/tmp/likeness-test-mark.png');
    expect(readMark(frame.data, 540, 960).letters).toEqual(EXPECTED_WORD);
  });
});
