// The recording a job makes (agent/recording): synthetic avatar ticks (a frame that turns white
// at a known tick, the agent's 1 kHz tone starting on the same tick) and the visitor's voice (a
// 440 Hz tone at another time) go through the real ffmpeg; the chunks land on a stand-in for
// the control plane, and the joined file is read back with the real ffprobe and ffmpeg.
import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AudioFifo } from '../../../agent/recording/index.ts';
import {
  AVATAR_FPS,
  AVATAR_SAMPLE_RATE,
  avatarFrameSize,
  RECORDING_CHUNK_MAX_BYTES,
} from '../../../src/contract/index.ts';
import {
  controlPlane,
  decodedAudio,
  ffprobe,
  flatFrame,
  frameLumas,
  onsetSample,
  recorderTo,
  SAMPLES_PER_TICK,
  TOKEN,
  toneStrength,
  toneTick,
} from './support.ts';

const dirs: string[] = [];
const servers: { stop(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function writeJoined(bytes: Uint8Array): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'likeness-recording-'));
  dirs.push(dir);
  const path = join(dir, 'part.mp4');
  await Bun.write(path, bytes);
  return path;
}

/** Ticks at twice real time: faster than a session, well within what ffmpeg takes without a backlog. */
const TICK_PACE_MS = 1000 / AVATAR_FPS / 2;

describe('a recorded session', () => {
  test('the joined chunks are one H.264 + AAC MP4 of the visit, picture and both voices in sync', async () => {
    const plane = controlPlane();
    servers.push(plane);
    const visitor = new AudioFifo({ maxSamples: AVATAR_SAMPLE_RATE, cushionSamples: 0 });
    const { logger, recorder } = recorderTo(plane, { visitorAudio: visitor });
    const size = avatarFrameSize('portrait');
    const dark = flatFrame(size, 16);
    const light = flatFrame(size, 235);
    // 5 s: the face turns white and the agent speaks at 1.6 s; the visitor speaks at 3.4 s for 1 s.
    const TICKS = 125;
    const FLASH = 40;
    const VISITOR = 85;
    for (let tick = 0; tick < TICKS; tick++) {
      if (tick === VISITOR) for (let t = 0; t < AVATAR_FPS; t++) visitor.push(toneTick(440, VISITOR + t));
      const speaking = tick >= FLASH && tick < FLASH + AVATAR_FPS;
      recorder.onTick(
        tick >= FLASH ? light : dark,
        speaking ? toneTick(1000, tick) : new Int16Array(SAMPLES_PER_TICK),
        tick,
      );
      await Bun.sleep(TICK_PACE_MS);
    }
    // Sent as it is made, not at the end: a worker that dies mid-session loses seconds.
    expect(plane.chunks.size).toBeGreaterThanOrEqual(1);
    const done = await recorder.stop();
    expect(logger.warnings).toEqual([]);

    // Numbered from 0 without a hole, each within the limit, with the job's token and a length.
    const numbers = [...plane.chunks.keys()].sort((a, b) => a - b);
    expect(numbers).toEqual([...numbers.keys()]);
    expect(numbers.length).toBeGreaterThanOrEqual(2); // a chunk per 2 s fragment, not the whole file at the end
    // Each chunk is whole boxes: the first opens the file, the others each open a fragment (or
    // the last is the index ffmpeg writes when it closes, mfra).
    const boxType = (bytes: Uint8Array) => new TextDecoder().decode(bytes.subarray(4, 8));
    const types = numbers.map((n) => boxType(plane.chunks.get(n)!.bytes));
    expect(types[0]).toBe('ftyp');
    expect(types.slice(1, -1).every((type) => type === 'moof')).toBe(true);
    expect(['moof', 'mfra']).toContain(types.at(-1)!);
    for (const chunk of plane.chunks.values()) {
      expect(chunk.bytes.length).toBeLessThanOrEqual(RECORDING_CHUNK_MAX_BYTES);
      expect(chunk.authorization).toBe(`Bearer ${TOKEN}`);
      expect(chunk.contentLength).toBe(String(chunk.bytes.length));
    }
    expect(done).toEqual({ chunks: numbers.length, duration_ms: 5000 });
    expect(plane.done).toEqual({ body: done, authorization: `Bearer ${TOKEN}` });

    const path = await writeJoined(plane.joined());
    const probe = await ffprobe(path);
    const video = probe.streams.filter((s) => s.codec_type === 'video');
    const audio = probe.streams.filter((s) => s.codec_type === 'audio');
    expect(video.map((s) => [s.codec_name, s.width, s.height])).toEqual([['h264', size.width, size.height]]);
    expect(audio.map((s) => s.codec_name)).toEqual(['aac']);
    expect(Math.abs(probe.duration - TICKS / AVATAR_FPS)).toBeLessThanOrEqual(0.2);

    // The flash and the tone's onset, each at its own stream's time: within a frame (40 ms);
    // in fact within a few ms, since the AAC encoder's priming is cut (encoder.ts).
    const lumas = await frameLumas(path);
    expect(lumas.length).toBe(TICKS);
    const flashFrame = lumas.findIndex((luma) => luma > 128);
    expect(flashFrame).toBe(FLASH);
    const samples = await decodedAudio(path);
    const flashAt = Number(video[0]!.start_time ?? 0) + flashFrame / AVATAR_FPS;
    const toneAt = Number(audio[0]!.start_time ?? 0) + onsetSample(samples, 2_000) / AVATAR_SAMPLE_RATE;
    expect(Math.abs(toneAt - flashAt)).toBeLessThanOrEqual(0.015);

    // Both voices, each where it spoke and not elsewhere.
    const at = (tick: number) => tick * SAMPLES_PER_TICK;
    const middle = (from: number) => [at(from + 5), at(from + 20)] as const;
    expect(toneStrength(samples, 1000, ...middle(FLASH))).toBeGreaterThan(5_000);
    expect(toneStrength(samples, 440, ...middle(FLASH))).toBeLessThan(500);
    expect(toneStrength(samples, 440, ...middle(VISITOR))).toBeGreaterThan(5_000);
    expect(toneStrength(samples, 1000, ...middle(VISITOR))).toBeLessThan(500);
    expect(toneStrength(samples, 440, at(5), at(35))).toBeLessThan(500);
  }, 30_000);

  test('a stall the runner skipped is filled with the last picture, so the file lasts as long as the visit', async () => {
    const plane = controlPlane();
    servers.push(plane);
    const { logger, recorder } = recorderTo(plane);
    const size = avatarFrameSize('landscape');
    const grey = flatFrame(size, 120);
    const light = flatFrame(size, 235);
    // 20 ticks, then the runner jumps 75 ahead (a 3 s stall, filled at once), then 25 more (the first white).
    const indices = [...Array(20).keys(), ...Array.from({ length: 25 }, (_, i) => 95 + i)];
    for (const index of indices) {
      recorder.onTick(index >= 50 ? light : grey, toneTick(1000, index), index);
      await Bun.sleep(TICK_PACE_MS);
    }
    const done = await recorder.stop();
    expect(logger.warnings).toEqual([]);
    expect(done?.duration_ms).toBe(4800);
    const path = await writeJoined(plane.joined());
    const probe = await ffprobe(path);
    expect(probe.streams.find((s) => s.codec_type === 'video')).toMatchObject({
      width: size.width,
      height: size.height,
    });
    expect(Math.abs(probe.duration - 4.8)).toBeLessThanOrEqual(0.2);
    const lumas = await frameLumas(path);
    expect(lumas.length).toBe(120);
    // The gap repeats the frame before it; the picture after it comes at its own time.
    expect(lumas.findIndex((luma) => luma > 200)).toBe(95);
    // …and the gap is silent: no speech was published during it.
    const samples = await decodedAudio(path);
    expect(toneStrength(samples, 1000, 25 * SAMPLES_PER_TICK, 90 * SAMPLES_PER_TICK)).toBeLessThan(300);
    expect(toneStrength(samples, 1000, 100 * SAMPLES_PER_TICK, 115 * SAMPLES_PER_TICK)).toBeGreaterThan(5_000);
  }, 30_000);
});
