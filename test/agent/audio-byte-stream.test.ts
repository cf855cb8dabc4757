// agents' AudioByteStream regroups audio into fixed frames; every STT stream writes each
// microphone frame through it. We patch it to copy instead of spreading bytes (agent/patches,
// hunk P1 in agent/agents-adapter/index.ts).
import { describe, expect, test } from 'bun:test';
import { AudioByteStream, initializeLogger } from '@livekit/agents';

initializeLogger({ pretty: false, level: 'error' });

function samples(from: number, count: number): Int16Array {
  return Int16Array.from({ length: count }, (_, i) => from + i);
}

describe('AudioByteStream (patched)', () => {
  test('the installed copy carries our patch: a write costs in proportion to what it holds', () => {
    // agents 1.9 spread what it held and the new bytes into an array one by one, and copied the
    // rest after each frame: two minutes written at once took 5–9 s there (quadratic), and each
    // microphone frame a few percent of a core. With plain copies: about 10 ms.
    const stream = new AudioByteStream(16_000, 1, 160);
    const twoMinutes = samples(0, 16_000 * 120);
    const started = performance.now();
    const frames = stream.write(twoMinutes);
    const elapsedMs = performance.now() - started;
    expect(frames).toHaveLength(12_000);
    expect([...frames.at(-1)!.data.subarray(-2)]).toEqual([...twoMinutes.subarray(-2)]);
    expect(elapsedMs).toBeLessThan(1_000);
  });

  test('regroups uneven writes into whole frames, in order, and keeps the remainder', () => {
    const stream = new AudioByteStream(16_000, 1, 800);
    const out: number[] = [];
    let next = 0;
    for (const size of [160, 300, 1_000, 7, 2_533, 160]) {
      for (const frame of stream.write(samples(next, size))) {
        expect(frame.samplesPerChannel).toBe(800);
        expect(frame.sampleRate).toBe(16_000);
        out.push(...frame.data);
      }
      next += size;
    }
    // 4160 samples written: five frames out, 160 held back until flush.
    expect(out.length).toBe(4_000);
    expect(out).toEqual([...samples(0, 4_000)]);
    const [rest] = stream.flush();
    expect([...rest!.data]).toEqual([...samples(4_000, 160)]);
    expect(stream.flush()).toEqual([]);
  });

  test('frames own their samples: later writes do not change frames already returned', () => {
    const stream = new AudioByteStream(16_000, 1, 4);
    const [first] = stream.write(samples(10, 6));
    stream.write(samples(100, 10));
    expect([...first!.data]).toEqual([10, 11, 12, 13]);
  });

  test('accepts an ArrayBuffer and a view into a larger buffer', () => {
    const stream = new AudioByteStream(8_000, 1, 2);
    const big = samples(0, 8);
    const frames = [...stream.write(big.buffer.slice(0, 4)), ...stream.write(big.subarray(2, 6))];
    expect(frames.map((f) => [...f.data])).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
  });
});
