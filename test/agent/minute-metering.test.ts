// The streaming meter on a fake clock: which minutes are reported, when (minute 0 begins when
// the visitor first receives the avatar), and what an invoice's usage counts. Its reports on
// their way (the control plane failing, or saying the credits ran out): meter-delivery.test.ts.
import { afterEach, describe, expect, test } from 'bun:test';
import { meterOnFakeClock } from '../support/meter-on-fake-clock.ts';
import {
  MINUTE,
  meterWith,
  minutes,
  START_DATE,
  types,
  usages,
  VISITOR,
  warnings,
} from '../support/streaming-meter.ts';

afterEach(() => {
  warnings.length = 0;
});

describe('minute boundaries', () => {
  test('with the visitor in the room, minutes are counted from the first published frame and reported at the start of each', async () => {
    const { clock, attempts, meter } = meterOnFakeClock();
    meter.participantConnected(VISITOR);
    await clock.advance(7_000); // the avatar takes a while to start: nothing is billed before it streams
    expect(attempts).toEqual([]);

    meter.firstFramePublished();
    await clock.advance(MINUTE - 1);
    expect(types(attempts)).toEqual(['avatar_streaming', 'minute 0']);
    expect(attempts[0]!.report).toEqual({ type: 'avatar_streaming', at: new Date(START_DATE + 7_000).toISOString() });

    await clock.advance(1 + 2 * MINUTE);
    expect(minutes(attempts)).toEqual([
      [0, 7_000],
      [1, 7_000 + MINUTE],
      [2, 7_000 + 2 * MINUTE],
      [3, 7_000 + 3 * MINUTE],
    ]);
    await meter.close();
  });

  test('minute 0 begins when the visitor first receives the avatar: the frame, or their join if the frame went out first', async () => {
    const { clock, attempts, meter } = meterOnFakeClock();
    await clock.advance(1_000);
    meter.participantConnected(VISITOR);
    // The frame went out at 400, before the visitor came (the meter hears of it later).
    meter.firstFramePublished(400);
    meter.firstFramePublished(900); // set once
    await clock.advance(MINUTE);
    expect(attempts[0]!.report).toEqual({ type: 'avatar_streaming', at: new Date(START_DATE + 400).toISOString() });
    expect(minutes(attempts)).toEqual([
      [0, 1_000],
      [1, 1_000 + MINUTE],
    ]);
    await meter.close();
  });

  test('a job taking over a session starts its minutes as long after the visitor receives its avatar as was left of the paid minute', async () => {
    // Three minutes billed by the job before; 23 s of the last one were left when its avatar was lost.
    const { clock, attempts, meter } = meterOnFakeClock(undefined, { minuteOffset: 3, paidLeftMs: 23_000 });
    meter.participantConnected(VISITOR);
    await clock.advance(2_000);
    meter.firstFramePublished();
    await clock.advance(22_999);
    // Streaming, but the rest of minute 2 is paid: nothing is charged yet.
    expect(types(attempts)).toEqual(['avatar_streaming']);
    await clock.advance(1 + MINUTE);
    expect(minutes(attempts)).toEqual([
      [3, 25_000],
      [4, 25_000 + MINUTE],
    ]);
    await meter.close();
  });

  test('nothing left of the paid minute: the visitor receiving the new avatar starts the next minute', async () => {
    const { clock, attempts, meter } = meterOnFakeClock(undefined, { minuteOffset: 3 });
    meter.participantConnected(VISITOR);
    await clock.advance(4_000);
    meter.firstFramePublished();
    await clock.advance(MINUTE);
    expect(minutes(attempts)).toEqual([
      [3, 4_000],
      [4, 4_000 + MINUTE],
    ]);
    await meter.close();
  });

  test('a timer that runs late still reports every minute the visitor stayed through', async () => {
    const { clock, attempts, meter } = meterOnFakeClock();
    meter.participantConnected(VISITOR);
    meter.firstFramePublished();
    await clock.advance(10);
    clock.stall(2.5 * MINUTE);
    await clock.advance(0);
    expect(minutes(attempts).map(([index]) => index)).toEqual([0, 1, 2]);
    await clock.advance(MINUTE);
    expect(minutes(attempts).map(([index]) => index)).toEqual([0, 1, 2, 3]);
    await meter.close();
  });

  test('a timer that fires a fraction of a ms before its boundary still reports that minute', async () => {
    const { clock, attempts, meter } = meterOnFakeClock();
    clock.earlyMs = 0.02;
    meter.firstFramePublished();
    await clock.advance(5_000);
    meter.participantConnected(VISITOR);
    await clock.advance(MINUTE + 1_500);
    expect(minutes(attempts).map(([index]) => index)).toEqual([0, 1]);
    await clock.advance(MINUTE);
    expect(minutes(attempts).map(([index]) => index)).toEqual([0, 1, 2]);
    await meter.close();
  });
});

describe('the visitor', () => {
  test('no minute is reported while no visitor is in the room', async () => {
    const { clock, attempts, meter } = meterOnFakeClock();
    meter.firstFramePublished();
    meter.participantConnected('someone_else');
    await clock.advance(5 * MINUTE);
    expect(types(attempts)).toEqual(['avatar_streaming']);
    await meter.close();
  });

  /** The avatar streams; the visitor joins 50 s later, stays `stayMs` and leaves; two minutes pass. */
  async function visitorJoiningLate(stayMs: number) {
    const { clock, attempts, meter } = meterOnFakeClock();
    meter.firstFramePublished();
    await clock.advance(50_000);
    meter.participantConnected(VISITOR);
    await clock.advance(stayMs);
    meter.participantDisconnected(VISITOR);
    await clock.advance(2 * MINUTE);
    return { attempts, meter };
  }

  test('a visitor joining 50 s after the avatar streams and staying 15 s pays one minute, not two', async () => {
    const { attempts, meter } = await visitorJoiningLate(15_000);
    expect(minutes(attempts)).toEqual([[0, 50_000]]);
    await meter.close();
    expect(usages(attempts).at(-1)).toMatchObject({ visitor_ms: 15_000, streaming: false, visitor_present: false });
  });

  test('one staying 61 s pays two; the second minute begins 60 s after the join', async () => {
    const { attempts, meter } = await visitorJoiningLate(61_000);
    expect(minutes(attempts)).toEqual([
      [0, 50_000],
      [1, 110_000],
    ]);
    await meter.close();
  });

  test('a visitor who leaves and comes back within the minute pays nothing more; later, the minute they come back in', async () => {
    const { clock, attempts, meter } = meterOnFakeClock();
    meter.firstFramePublished();
    await clock.advance(10_000);
    meter.participantConnected(VISITOR); // minute 0 from 10 s
    await clock.advance(20_000);
    meter.participantDisconnected(VISITOR);
    await clock.advance(20_000);
    meter.participantConnected(VISITOR); // 50 s: still minute 0
    await clock.advance(15_000);
    meter.participantDisconnected(VISITOR); // 65 s
    await clock.advance(60_000);
    expect(minutes(attempts)).toEqual([[0, 10_000]]);
    meter.participantConnected(VISITOR); // 125 s: minute 1 (70–130 s) is due at once
    await clock.advance(0);
    expect(minutes(attempts)).toEqual([
      [0, 10_000],
      [1, 125_000],
    ]);
    await meter.close();
    expect(usages(attempts).at(-1)).toMatchObject({ visitor_ms: 35_000, streamed_ms: 125_000 });
  });

  test('leaving reports visitor_left; minutes resume only when the visitor is back', async () => {
    const { clock, attempts, meter } = meterOnFakeClock();
    meter.participantConnected(VISITOR);
    meter.firstFramePublished();
    await clock.advance(30_000);
    meter.participantDisconnected(VISITOR);
    await clock.advance(15_000);
    meter.participantConnected(VISITOR); // back within minute 0: already reported
    await clock.advance(25_000); // 70 s: minute 1
    meter.participantDisconnected(VISITOR);
    meter.participantDisconnected('someone_else');
    await clock.advance(130_000); // 200 s: minutes 2 had nobody
    meter.participantConnected(VISITOR);
    await clock.advance(0);
    expect(types(attempts)).toEqual([
      'avatar_streaming',
      'minute 0',
      'visitor_left',
      'visitor_joined',
      'minute 1',
      'visitor_left',
      'visitor_joined',
      'minute 3',
    ]);
    expect(minutes(attempts)).toEqual([
      [0, 0],
      [1, MINUTE],
      [3, 200_000],
    ]);
    await meter.close();
  });

  test('a visitor who leaves before the avatar streams is still reported as gone', async () => {
    const { clock, attempts, meter } = meterOnFakeClock();
    meter.participantConnected(VISITOR);
    await clock.advance(2_000);
    meter.participantDisconnected(VISITOR);
    meter.firstFramePublished();
    await clock.advance(2 * MINUTE);
    expect(types(attempts)).toEqual(['visitor_left', 'avatar_streaming']);
    await meter.close();
  });
});

describe('usage', () => {
  test('reported at each minute boundary, as the visitor leaves (before visitor_left) and at the close, each with the whole count', async () => {
    const { clock, attempts, meter } = meterOnFakeClock();
    meter.participantConnected(VISITOR);
    await clock.advance(5_000);
    meter.firstFramePublished();
    await clock.advance(MINUTE + 10_000);
    meter.participantDisconnected(VISITOR);
    await clock.advance(5_000);
    await meter.close();
    const sent = attempts.map((a) => a.report.type);
    expect(sent.indexOf('visitor_left')).toBe(sent.lastIndexOf('usage', sent.indexOf('visitor_left')) + 1);
    expect(
      usages(attempts).map(({ streamed_ms, visitor_ms, streaming, visitor_present, sentAt }) => ({
        streamed_ms,
        visitor_ms,
        streaming,
        visitor_present,
        sentAt,
      })),
    ).toEqual([
      { streamed_ms: MINUTE, visitor_ms: MINUTE, streaming: true, visitor_present: true, sentAt: 5_000 + MINUTE },
      {
        streamed_ms: MINUTE + 10_000,
        visitor_ms: MINUTE + 10_000,
        streaming: true,
        visitor_present: false,
        sentAt: 15_000 + MINUTE,
      },
      {
        streamed_ms: MINUTE + 15_000,
        visitor_ms: MINUTE + 10_000,
        streaming: false,
        visitor_present: false,
        sentAt: 20_000 + MINUTE,
      },
    ]);
    expect(usages(attempts)[0]!.at).toBe(new Date(START_DATE + 5_000 + MINUTE).toISOString());
  });

  test('a job leaving a session that goes on sends its last usage before agent_leaving', async () => {
    const { clock, attempts, meter } = meterOnFakeClock();
    meter.participantConnected(VISITOR);
    meter.firstFramePublished();
    await clock.advance(20_000);
    meter.agentLeaving();
    // Said as the worker's stop request arrives, and again by the job's shutdown: told once.
    meter.agentLeaving();
    await meter.close();
    expect(attempts.map((a) => a.report.type).slice(-2)).toEqual(['usage', 'agent_leaving']);
    expect(attempts.filter((a) => a.report.type === 'agent_leaving')).toHaveLength(1);
    expect(usages(attempts)).toHaveLength(1);
    expect(usages(attempts)[0]).toMatchObject({ streamed_ms: 20_000, visitor_ms: 20_000, streaming: false });
  });

  test('nothing streamed, nothing to tell; out of credits, the usage is still told', async () => {
    const {
      clock,
      reporter,
      attempts,
      meter: idle,
    } = meterOnFakeClock((report) =>
      report.type === 'minute' && report.index === 1 ? 'credits_exhausted' : 'accepted',
    );
    idle.participantConnected(VISITOR);
    await idle.close();
    expect(usages(attempts)).toEqual([]);
    const meter = meterWith(clock, reporter);
    meter.participantConnected(VISITOR);
    meter.firstFramePublished();
    await clock.advance(MINUTE + 1_000);
    expect(meter.creditsExhausted).toBe(true);
    await clock.advance(MINUTE);
    await meter.close();
    expect(usages(attempts).at(-1)).toMatchObject({ streamed_ms: MINUTE, visitor_ms: MINUTE, streaming: false });
  });
});
