// The small parts around a recording: the notice said before the greeting
// (agent/conversation/greeting.ts), the saturating mix of the two voices, and the bounded
// queue the visitor's voice waits in (agent/recording/audio-fifo.ts).
import { describe, expect, test } from 'bun:test';
import { recordingNotice } from '../../../agent/conversation/greeting.ts';
import { AudioFifo, mix } from '../../../agent/recording/index.ts';
import { SAMPLES_PER_TICK } from './support.ts';

describe('around a recording', () => {
  test('the notice is said only for a recorded session that has one', () => {
    expect(recordingNotice({ record: true, recording_notice: '  This call is recorded.  ' })).toBe(
      'This call is recorded.',
    );
    expect(recordingNotice({ record: false, recording_notice: 'This call is recorded.' })).toBeNull();
    expect(recordingNotice({ recording_notice: 'This call is recorded.' })).toBeNull();
    expect(recordingNotice({ record: true, recording_notice: '   ' })).toBeNull();
    expect(recordingNotice({ record: true, recording_notice: null })).toBeNull();
    expect(recordingNotice({ record: true })).toBeNull();
  });

  test('the voices add up and clip rather than wrap around', () => {
    const speech = new Int16Array(SAMPLES_PER_TICK).fill(30_000);
    const visitor = new Int16Array(SAMPLES_PER_TICK).fill(10_000);
    visitor[1] = -20_000;
    const mixed = mix(speech, visitor);
    expect(mixed.length).toBe(SAMPLES_PER_TICK);
    expect([mixed[0], mixed[1]]).toEqual([32_767, 10_000]);
    expect(mix(new Int16Array(SAMPLES_PER_TICK).fill(-30_000), new Int16Array(SAMPLES_PER_TICK).fill(-30_000))[0]).toBe(
      -32_768,
    );
    expect(mix(speech, undefined)[5]).toBe(30_000);
  });

  test("the visitor's queue waits for its cushion, pads an underrun with silence and drops its oldest beyond its bound", () => {
    const fifo = new AudioFifo({ maxSamples: 100, cushionSamples: 30 });
    const ramp = (from: number, count: number) => Int16Array.from({ length: count }, (_, i) => from + i);
    fifo.push(ramp(1, 20));
    expect([...fifo.take(10)]).toEqual(new Array(10).fill(0)); // below the cushion: nothing yet
    fifo.push(ramp(21, 20));
    expect([...fifo.take(10)]).toEqual([...ramp(1, 10)]);
    expect([...fifo.take(40)]).toEqual([...ramp(11, 30), ...new Array(10).fill(0)]); // ran dry: padded
    fifo.push(ramp(100, 10));
    expect([...fifo.take(5)]).toEqual([0, 0, 0, 0, 0]); // after an underrun the cushion is waited for again
    fifo.push(ramp(200, 150));
    expect(fifo.length).toBe(100); // the oldest went
    expect(fifo.take(1)[0]).toBe(250);
  });
});
