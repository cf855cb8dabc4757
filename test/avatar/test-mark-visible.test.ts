// Test mode's mark end to end: a session started with a test key (`lk_test_…`) reaches the
// agent as a test dispatch, and the avatar video a real visitor (rtc-node, over the real
// LiveKit server) receives reads "TEST" in its top-left corner, frame after frame; a live
// key's session, same identity photo and worker, shows no mark.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type RemoteTrack, TrackKind, VideoBufferType, type VideoFrame, VideoStream } from '@livekit/rtc-node';
import sharp from 'sharp';
import { sharedProviderFakes } from '../support/preload.ts';
import type { TestAccount, TestService } from '../support/service.ts';
import { eventually, joinAsVisitor } from '../support/visitor.ts';
import { startVisitorService } from '../support/visitor-service.ts';
import { createAstronaut, startSession } from './support.ts';
import { EXPECTED_WORD, type ReadMark, readMark } from './test-mark-reading.ts';

const fakes = sharedProviderFakes();
/**
 * Frames read from a second after the first (the encoder's first frames are soft): this many
 * (about 2.5 s at 25 fps; counted rather than timed, so a busy machine's stall only delays them).
 */
const SETTLE_MS = 1_000;
const FRAMES = 60;

let service: TestService;
let live: TestAccount;
let testMode: TestAccount;

beforeAll(async () => {
  ({ service, account: live } = await startVisitorService());
  // A test key of the same account: what it makes lives on the account's test account.
  const key = await service.services.operations.createKey({ account_id: live.accountId, name: 'e2e', test: true });
  expect(key.api_key.startsWith('lk_test_')).toBe(true);
  testMode = {
    accountId: live.accountId,
    apiKey: key.api_key,
    call: (method, path, init = {}) =>
      service.call(method, path, { ...init, headers: { authorization: `Bearer ${key.api_key}`, ...init.headers } }),
  };
  fakes.openai.respond(() => 'All right.');
});
afterAll(async () => {
  await service?.stop();
});

interface ReadFrame {
  at: number;
  width: number;
  height: number;
  read: ReadMark;
  /** The frame itself, kept for every 20th frame (to look at). */
  frame?: VideoFrame;
}

/** Reads the mark off every frame of the track as it arrives, until closed. */
function readFrames(track: RemoteTrack): { frames: ReadFrame[]; close(): void } {
  const frames: ReadFrame[] = [];
  const reader = new VideoStream(track).getReader();
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done || !value) return;
      const at = performance.now();
      const { frame } = value;
      const i420 = frame.type === VideoBufferType.I420 ? frame : frame.convert(VideoBufferType.I420);
      const read = readMark(i420.data, frame.width, frame.height);
      const keep = frames.length % 20 === 0;
      frames.push({ at, width: frame.width, height: frame.height, read, ...(keep ? { frame: i420 } : {}) });
    }
  })();
  return { frames, close: () => void reader.cancel().catch(() => undefined) };
}

/** Starts a phone session with this account's key and reads FRAMES frames its visitor receives. */
async function watchedFrames(account: TestAccount, marker: string): Promise<ReadFrame[]> {
  const identity = await createAstronaut(account, { prompt: `You are Ada. Marker: ${marker}.` });
  const session = await startSession(account, { identity_id: identity.identity_id, form_factor: 'phone' });
  const visitor = await joinAsVisitor(session);
  try {
    const track = await eventually(
      () => visitor.tracks.find((t) => t.kind === TrackKind.KIND_VIDEO),
      20_000,
      'the avatar video',
    );
    const reading = readFrames(track);
    try {
      const first = await eventually(() => reading.frames[0], 20_000, 'the first frame');
      const from = first.at + SETTLE_MS;
      const settled = () => reading.frames.filter((f) => f.at >= from);
      await eventually(() => settled().length >= FRAMES, SETTLE_MS + 30_000, `${FRAMES} frames`);
      return settled().slice(0, FRAMES);
    } finally {
      reading.close();
    }
  } finally {
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
    await visitor.leave().catch(() => undefined);
  }
}

describe('the TEST mark as a visitor receives it', () => {
  test('a test key’s session: every frame has the red box top left, 6–8 % of the height, reading TEST', async () => {
    const frames = await watchedFrames(testMode, 'e2e-test-mark');
    expect(frames.length).toBe(FRAMES);
    // What the visitor saw, to look at.
    const last = frames.findLast((f) => f.frame)?.frame;
    if (last) {
      const rgba = last.convert(VideoBufferType.RGBA).data;
      await sharp(rgba, { raw: { width: last.width, height: last.height, channels: 4 } })
        .png()
        .toFile('/tmp/likeness-test-mark-received.png');
    }
    const reading = frames.filter((f) => JSON.stringify(f.read.letters) === JSON.stringify(EXPECTED_WORD));
    console.log(
      `test session: ${reading.length} of ${frames.length} received frames read TEST; box ${JSON.stringify(frames[0]!.read.box)} in ${frames[0]!.width}×${frames[0]!.height}`,
    );
    for (const { read, width, height } of frames) {
      expect(`${width}x${height}`).toBe('540x960');
      const box = read.box!;
      expect(box).toBeDefined();
      expect(box.x0).toBeLessThan(0.05 * width);
      expect(box.y0).toBeLessThan(0.05 * height);
      // Encoding may blur the box's edge by a pixel or two.
      expect((box.y1 - box.y0) / height).toBeGreaterThan(0.055);
      expect((box.y1 - box.y0) / height).toBeLessThan(0.085);
      expect(read.inkLuma! - read.boxLuma!).toBeGreaterThan(80);
    }
    // The letters, cell by cell, after compression: (almost) every frame.
    expect(reading.length).toBeGreaterThanOrEqual(Math.floor(0.95 * frames.length));
  }, 120_000);

  test('a live key’s session: no mark', async () => {
    const frames = await watchedFrames(live, 'e2e-live-no-mark');
    expect(frames.length).toBe(FRAMES);
    console.log(`live session: red pixels in the corner at most ${Math.max(...frames.map((f) => f.read.redPixels))}`);
    for (const { read } of frames) {
      expect(read.box).toBeUndefined();
      expect(read.letters).toEqual([]);
    }
  }, 120_000);
});
