// How a recording's chunks reach the control plane (agent/recording/chunk-sender.ts,
// fragments.ts) and what the recorder does when something fails: a 5xx is retried, a 4xx
// stops the recording, ffmpeg dying mid-session closes the part with what was sent. Real
// ffmpeg and ffprobe; a Bun.serve stands for the control plane.
import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FragmentCutter } from '../../../agent/recording/fragments.ts';
import type { SessionRecorder } from '../../../agent/recording/index.ts';
import { AVATAR_FPS, RECORDING_CHUNK_SECONDS } from '../../../src/contract/index.ts';
import { eventually } from '../../support/visitor.ts';
import { type Answer, controlPlane, ffprobe, flatFrame, recorderTo, toneTick } from './support.ts';

const SMALL = { width: 160, height: 288 };
const TICK_MS = 1000 / AVATAR_FPS;
const dirs: string[] = [];
const servers: { stop(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempPath(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'likeness-recording-'));
  dirs.push(dir);
  return join(dir, name);
}

function recorderFor(answer: Answer) {
  const plane = controlPlane(answer);
  servers.push(plane);
  return { plane, ...recorderTo(plane, { retryDelaysMs: [50, 100, 200] }) };
}

/**
 * Ticks from `from` on at twice real time (small frames: ffmpeg keeps up easily on a quiet
 * machine). On a loaded one the light stream's ffmpeg can start late and the recorder drops
 * ticks (CI's stop 56: two chunks of seven seconds), so what each test expects is counted from
 * the ticks written, and a test that needs chunks ticks until it has them.
 */
async function tick(recorder: SessionRecorder, from: number, count: number, video = true): Promise<void> {
  for (let index = from; index < from + count; index++) {
    recorder.onTick(video ? flatFrame(SMALL, (index * 3) % 220) : null, toneTick(500, index), index);
    await Bun.sleep(TICK_MS / 2);
  }
}

/** Ticks on from `from` until `enough` holds, a second at a time, at most `seconds`; returns the next index. */
async function tickUntil(
  recorder: SessionRecorder,
  from: number,
  enough: () => boolean,
  seconds = 20,
): Promise<number> {
  let next = from;
  while (!enough() && next - from < seconds * AVATAR_FPS) {
    await tick(recorder, next, AVATAR_FPS);
    next += AVATAR_FPS;
  }
  expect(enough()).toBe(true);
  return next;
}

describe('the chunks of a recording', () => {
  test('a 5xx is retried: every chunk arrives once, in order, and done counts them', async () => {
    const { plane, logger, recorder } = recorderFor(({ kind, n, attempt }) =>
      (kind === 'chunk' && n === 1 && attempt < 3) || (kind === 'done' && attempt === 1) ? 503 : 200,
    );
    await tick(recorder, 0, 7 * AVATAR_FPS);
    const done = await recorder.stop();
    expect(logger.warnings).toEqual([]);
    expect(plane.attempts.get('chunk:1')).toBe(3);
    expect(plane.attempts.get('done:-1')).toBe(2);
    const numbers = [...plane.chunks.keys()].sort((a, b) => a - b);
    // A fragment every RECORDING_CHUNK_SECONDS of the ticks written: seven seconds' less any
    // the machine's load made the recorder drop.
    const written = 7 * AVATAR_FPS - logger.droppedTicks;
    // One chunk per fragment, then ffmpeg's trailer (its fragment index, `mfra`) in a chunk of its own.
    expect(numbers.length).toBe(Math.ceil(written / (RECORDING_CHUNK_SECONDS * AVATAR_FPS)) + 1);
    expect(new TextDecoder().decode(plane.chunks.get(numbers.length - 1)!.bytes.subarray(4, 8))).toBe('mfra');
    expect(numbers).toEqual([...numbers.keys()]);
    expect(done).toEqual({ chunks: numbers.length, duration_ms: 7000 - logger.droppedTicks * TICK_MS });
    expect(plane.done?.body).toEqual(done);
    const path = tempPath('part.mp4');
    await Bun.write(path, plane.joined());
    const probe = await ffprobe(path);
    expect(probe.streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264']);
    expect(Math.abs(probe.duration - done!.duration_ms / 1000)).toBeLessThanOrEqual(0.2);
  }, 30_000);

  test('a 4xx is final: nothing more is sent, not even done, and ffmpeg stops', async () => {
    const { plane, logger, recorder } = recorderFor(({ kind, n }) => (kind === 'chunk' && n === 1 ? 403 : 200));
    await tick(recorder, 0, 5 * AVATAR_FPS);
    const pid = recorder.encoderPid!;
    await tick(recorder, 5 * AVATAR_FPS, 3 * AVATAR_FPS);
    expect(await recorder.stop()).toBeNull();
    expect(plane.requests.filter((r) => r.kind === 'chunk').map((r) => [r.n, r.status])).toEqual([
      [0, 200],
      [1, 403],
    ]);
    expect(plane.done).toBeUndefined();
    expect(logger.warnings).toEqual(['the control plane refused chunk 1 of the recording; recording stops']);
    expect(() => process.kill(pid, 0)).toThrow(); // the encoder is gone
  }, 30_000);

  test('ffmpeg dying mid-session closes the part with what was sent; the ticks after it are harmless', async () => {
    const { plane, logger, recorder } = recorderFor(() => 200);
    const next = await tickUntil(recorder, 0, () => plane.chunks.size >= 2, 15);
    process.kill(recorder.encoderPid!, 'SIGKILL');
    await eventually(() => plane.done);
    await tick(recorder, next, AVATAR_FPS);
    const done = await recorder.stop();
    expect(logger.warnings).toContain('the recording encoder stopped; the session goes on unrecorded');
    expect(done?.chunks).toBe(plane.chunks.size);
    expect(plane.done?.body).toEqual(done);
    // What arrived is still a file (the chunks end on whole fragments).
    const path = tempPath('part.mp4');
    await Bun.write(path, plane.joined());
    const probe = await ffprobe(path);
    expect(probe.streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264']);
    expect(probe.duration).toBeGreaterThanOrEqual(2);
  }, 30_000);

  test('without frames of ours the recording is audio only: one AAC stream, as long as the visit', async () => {
    const { plane, logger, recorder } = recorderFor(() => 200);
    await tick(recorder, 0, 5 * AVATAR_FPS, false);
    const done = await recorder.stop();
    expect(done).toEqual({ chunks: plane.chunks.size, duration_ms: 5000 - logger.droppedTicks * TICK_MS });
    expect(plane.chunks.size).toBeGreaterThanOrEqual(2);
    const path = tempPath('part.m4a');
    await Bun.write(path, plane.joined());
    const probe = await ffprobe(path);
    expect(probe.streams.map((s) => [s.codec_type, s.codec_name])).toEqual([['audio', 'aac']]);
    expect(Math.abs(probe.duration - done!.duration_ms / 1000)).toBeLessThanOrEqual(0.2);
  }, 30_000);

  test('a fragment larger than a chunk is sent in pieces that join into the same bytes', async () => {
    const path = tempPath('source.mp4');
    const make = Bun.spawn(
      [
        '/usr/bin/ffmpeg',
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=320x240:rate=25:duration=4',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-g',
        '50',
        '-movflags',
        'frag_keyframe+empty_moov+default_base_moof',
        '-f',
        'mp4',
        path,
      ],
      { stderr: 'pipe' },
    );
    expect(await make.exited).toBe(0);
    const source = new Uint8Array(readFileSync(path));
    const max = 20_000;
    const cutter = new FragmentCutter(max);
    const chunks: Uint8Array[] = [];
    // In uneven pieces, as a pipe delivers them.
    for (let at = 0; at < source.length; at += 7_777) chunks.push(...cutter.push(source.subarray(at, at + 7_777)));
    const rest = cutter.flush();
    chunks.push(...rest.chunks);
    expect(rest.droppedBytes).toBe(0);
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(max);
    expect(Buffer.concat(chunks).equals(source)).toBe(true);
  });
});
