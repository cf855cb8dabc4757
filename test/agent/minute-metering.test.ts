// The streaming meter on a fake clock: which minutes are reported, when (minute 0 begins when
// the visitor first receives the avatar), what an invoice's usage counts, and what happens when
// the control plane fails or says the credits ran out.
import { afterEach, describe, expect, test } from 'bun:test';
import { EventEmitter } from 'node:events';
import { ConnectionState, type Room, RoomEvent } from '@livekit/rtc-node';
import {
  httpReporter,
  type MeterClock,
  meterRoomParticipants,
  outcomeOf,
  type ReportOutcome,
  StreamingMeter,
  type StreamingMeterOptions,
} from '../../agent/reports/index.ts';
import type { MeterReport } from '../../src/contract/index.ts';
import { recordingLogger } from '../support/agent-log.ts';

const MINUTE = 60_000;
const VISITOR = 'visitor_abc';
const START_DATE = Date.UTC(2025, 0, 1, 12, 0, 0);

/** Monotonic time that moves only when told to, firing due timers in order on the way. */
class FakeClock implements MeterClock {
  #now = 0;
  #timers: { at: number; seq: number; callback: () => void }[] = [];
  #seq = 0;

  now(): number {
    return this.#now;
  }

  date(): Date {
    return new Date(START_DATE + this.#now);
  }

  setTimer(delayMs: number, callback: () => void): () => void {
    const timer = { at: this.#now + Math.max(0, delayMs), seq: this.#seq++, callback };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /** Moves time forward by `ms`, firing every timer due on the way at its due time. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (;;) {
      const next = this.#timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = Math.max(this.#now, next.at - this.earlyMs);
      next.callback();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  /** Timers fire this much before their time (the clock reads slightly less than they were set for). */
  earlyMs = 0;

  /** Moves time forward without firing anything, as a blocked event loop would. */
  stall(ms: number): void {
    this.#now += ms;
  }
}

/** Lets every pending promise chain (deliveries) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

interface Sent {
  report: MeterReport;
  at: number;
}

/** Records every delivery attempt; `answer` decides each outcome (default: accepted). */
function fakeReporter(
  clock: FakeClock,
  answer: (report: MeterReport, attempt: number) => ReportOutcome | Error = () => 'accepted',
) {
  const attempts: Sent[] = [];
  const attemptsOf = new Map<string, number>();
  const reporter = async (report: MeterReport): Promise<ReportOutcome> => {
    attempts.push({ report, at: clock.now() });
    const key = JSON.stringify(report);
    const attempt = attemptsOf.get(key) ?? 0;
    attemptsOf.set(key, attempt + 1);
    const outcome = answer(report, attempt);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  };
  return { reporter, attempts };
}

const quietLogger = recordingLogger();
const warnings = quietLogger.lines;
afterEach(() => {
  warnings.length = 0;
});

function meterWith(
  clock: FakeClock,
  reporter: StreamingMeterOptions['reporter'],
  options: Partial<StreamingMeterOptions> = {},
) {
  return new StreamingMeter({
    intervalSeconds: 60,
    visitorIdentity: VISITOR,
    reporter,
    clock,
    logger: quietLogger,
    ...options,
  });
}

const minutes = (sent: Sent[]) =>
  sent.filter((s) => s.report.type === 'minute').map((s) => [(s.report as { index: number }).index, s.at]);
/** The reports but the usage ones (their own tests below). */
const types = (sent: Sent[]) =>
  sent
    .filter((s) => s.report.type !== 'usage')
    .map((s) => (s.report.type === 'minute' ? `minute ${s.report.index}` : s.report.type));
const usages = (sent: Sent[]) =>
  sent.flatMap((s) => (s.report.type === 'usage' ? [{ ...s.report, sentAt: s.at }] : []));

describe('minute boundaries', () => {
  test('with the visitor in the room, minutes are counted from the first published frame and reported at the start of each', async () => {
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
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
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
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
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    // Three minutes billed by the job before; 23 s of the last one were left when its avatar was lost.
    const meter = meterWith(clock, reporter, { minuteOffset: 3, paidLeftMs: 23_000 });
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
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter, { minuteOffset: 3 });
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
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
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
    const clock = new FakeClock();
    clock.earlyMs = 0.02;
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
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
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
    meter.firstFramePublished();
    meter.participantConnected('someone_else');
    await clock.advance(5 * MINUTE);
    expect(types(attempts)).toEqual(['avatar_streaming']);
    await meter.close();
  });

  test('a visitor joining 50 s after the avatar streams and staying 15 s pays one minute, not two', async () => {
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
    meter.firstFramePublished();
    await clock.advance(50_000);
    meter.participantConnected(VISITOR);
    await clock.advance(15_000);
    meter.participantDisconnected(VISITOR);
    await clock.advance(2 * MINUTE);
    expect(minutes(attempts)).toEqual([[0, 50_000]]);
    await meter.close();
    expect(usages(attempts).at(-1)).toMatchObject({ visitor_ms: 15_000, streaming: false, visitor_present: false });
  });

  test('one staying 61 s pays two; the second minute begins 60 s after the join', async () => {
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
    meter.firstFramePublished();
    await clock.advance(50_000);
    meter.participantConnected(VISITOR);
    await clock.advance(61_000);
    meter.participantDisconnected(VISITOR);
    await clock.advance(2 * MINUTE);
    expect(minutes(attempts)).toEqual([
      [0, 50_000],
      [1, 110_000],
    ]);
    await meter.close();
  });

  test('a visitor who leaves and comes back within the minute pays nothing more; later, the minute they come back in', async () => {
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
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
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
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
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
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
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
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
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
    meter.participantConnected(VISITOR);
    meter.firstFramePublished();
    await clock.advance(20_000);
    meter.agentLeaving();
    await meter.close();
    expect(attempts.map((a) => a.report.type).slice(-2)).toEqual(['usage', 'agent_leaving']);
    expect(usages(attempts)).toHaveLength(1);
    expect(usages(attempts)[0]).toMatchObject({ streamed_ms: 20_000, visitor_ms: 20_000, streaming: false });
  });

  test('nothing streamed, nothing to tell; out of credits, the usage is still told', async () => {
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock, (report) =>
      report.type === 'minute' && report.index === 1 ? 'credits_exhausted' : 'accepted',
    );
    const idle = meterWith(clock, reporter);
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

describe('delivery', () => {
  test('a 402 stops every further report', async () => {
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock, (report) =>
      report.type === 'minute' && report.index === 1 ? 'credits_exhausted' : 'accepted',
    );
    const meter = meterWith(clock, reporter);
    meter.participantConnected(VISITOR);
    meter.firstFramePublished();
    await clock.advance(MINUTE);
    expect(meter.creditsExhausted).toBe(true);
    await clock.advance(3 * MINUTE);
    meter.participantDisconnected(VISITOR);
    meter.participantConnected(VISITOR);
    await clock.advance(0);
    expect(types(attempts)).toEqual(['avatar_streaming', 'minute 0', 'minute 1']);
    expect(warnings.some((w) => w.msg.includes('credits exhausted') && w.minute === 1)).toBe(true);
    await meter.close();
  });

  test('failed reports are retried with backoff, in order, for as long as the session runs: an outage loses no minute', async () => {
    const clock = new FakeClock();
    // The control plane is down from the first minute for three minutes (every attempt fails).
    const down = (at: number) => at >= MINUTE && at < 4 * MINUTE;
    const { reporter, attempts } = fakeReporter(clock, (report, attempt) => {
      if (report.type === 'avatar_streaming') return attempt < 2 ? 'retry' : 'accepted';
      if (report.type === 'minute' && report.index === 0)
        return attempt === 0 ? new Error('connection refused') : 'accepted';
      return down(clock.now()) ? 'retry' : 'accepted';
    });
    const meter = meterWith(clock, reporter, { retryDelaysMs: [500, 1_000, 2_000] });
    meter.participantConnected(VISITOR);
    meter.firstFramePublished();
    await clock.advance(10_000);
    // avatar_streaming at 0, +500, +1000; minute 0 (queued behind it) at 1500 and 2000
    expect(attempts.slice(0, 5).map((a) => a.at)).toEqual([0, 500, 1_500, 1_500, 2_000]);
    await clock.advance(5 * MINUTE);
    // Minutes 1–3 came due during the outage: retried (then every 2 s) until it ended, and
    // delivered in order once it did; none was given up.
    const delivered = (index: number) =>
      attempts.some((a) => a.report.type === 'minute' && a.report.index === index && !down(a.at));
    for (const index of [1, 2, 3, 4, 5]) expect(delivered(index)).toBe(true);
    const retriesOfMinute1 = attempts
      .filter((a) => a.report.type === 'minute' && a.report.index === 1)
      .map((a) => a.at);
    expect(retriesOfMinute1.slice(0, 4)).toEqual([MINUTE, MINUTE + 500, MINUTE + 1_500, MINUTE + 3_500]);
    expect(retriesOfMinute1[4]! - retriesOfMinute1[3]!).toBe(2_000);
    expect(warnings.some((w) => w.msg.includes('giving up'))).toBe(false);
    await meter.close();
  });

  test('after the session ends, undelivered reports are retried for the grace, then given up', async () => {
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock, (report) =>
      report.type === 'visitor_left' ? 'retry' : 'accepted',
    );
    const meter = meterWith(clock, reporter, { retryDelaysMs: [1_000], closeGraceMs: 5_000 });
    meter.participantConnected(VISITOR);
    meter.firstFramePublished();
    await clock.advance(1_000);
    meter.participantDisconnected(VISITOR);
    const closed = meter.close();
    await clock.advance(10_000);
    await closed;
    const tries = attempts.filter((a) => a.report.type === 'visitor_left').map((a) => a.at);
    expect(tries).toEqual([1_000, 2_000, 3_000, 4_000, 5_000, 6_000]);
    expect(
      warnings.some(
        (w) =>
          w.report === 'visitor_left' &&
          w.attempts === 6 &&
          w.msg === 'a report could not be delivered, the session over; giving up',
      ),
    ).toBe(true);
  });

  test('a refused report is not retried', async () => {
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock, (report) =>
      report.type === 'minute' && report.index === 0 ? 'refused' : 'accepted',
    );
    const meter = meterWith(clock, reporter);
    meter.participantConnected(VISITOR);
    meter.firstFramePublished();
    await clock.advance(MINUTE);
    expect(types(attempts)).toEqual(['avatar_streaming', 'minute 0', 'minute 1']);
    await meter.close();
  });

  test('close() stops the minutes and waits for reports still being delivered', async () => {
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock, (report, attempt) =>
      report.type === 'visitor_left' && attempt === 0 ? 'retry' : 'accepted',
    );
    const meter = meterWith(clock, reporter);
    meter.participantConnected(VISITOR);
    meter.firstFramePublished();
    await clock.advance(10_000);
    meter.participantDisconnected(VISITOR);
    await clock.advance(0);
    let closed = false;
    const closing = meter.close().then(() => (closed = true));
    await clock.advance(100);
    expect(closed).toBe(false); // visitor_left is waiting for its retry
    await clock.advance(500);
    await closing;
    meter.participantConnected(VISITOR);
    await clock.advance(5 * MINUTE);
    expect(types(attempts)).toEqual(['avatar_streaming', 'minute 0', 'visitor_left', 'visitor_left']);
  });
});

describe('httpReporter', () => {
  test('posts the report with the bearer token and classifies the answer', async () => {
    const received: { auth: string | null; type: string | null; body: unknown }[] = [];
    let status = 200;
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        received.push({
          auth: request.headers.get('authorization'),
          type: request.headers.get('content-type'),
          body: await request.json(),
        });
        return Response.json({ ok: status < 300 }, { status });
      },
    });
    try {
      const send = httpReporter({
        url: `http://127.0.0.1:${server.port}/internal/sessions/ses_1/reports`,
        token: 'tok_secret',
      });
      expect(await send({ type: 'minute', index: 3 })).toBe('accepted');
      expect(received).toEqual([
        { auth: 'Bearer tok_secret', type: 'application/json', body: { type: 'minute', index: 3 } },
      ]);
      status = 402;
      expect(await send({ type: 'minute', index: 4 })).toBe('credits_exhausted');
      status = 503;
      expect(await send({ type: 'minute', index: 4 })).toBe('retry');
      status = 401;
      expect(await send({ type: 'visitor_left' })).toBe('refused');
    } finally {
      await server.stop(true);
    }
  });

  test('a control plane that cannot be reached is worth retrying', async () => {
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
    const url = `http://127.0.0.1:${server.port}/reports`;
    await server.stop(true);
    expect(await httpReporter({ url, token: 't' })({ type: 'visitor_left' })).toBe('retry');
  });

  test('status classes', () => {
    expect([200, 204, 402, 408, 429, 500, 502, 400, 401, 404, 409].map(outcomeOf)).toEqual([
      'accepted',
      'accepted',
      'credits_exhausted',
      'retry',
      'retry',
      'retry',
      'retry',
      'refused',
      'refused',
      'refused',
      'refused',
    ]);
  });
});

describe('the room feeding the meter', () => {
  /** Stands in for rtc-node's Room: its participant events and its own connection state. */
  class FakeRoom extends EventEmitter {
    connectionState = ConnectionState.CONN_CONNECTED;
    remoteParticipants = new Map<string, { identity: string }>();
  }

  test('a visitor who leaves while the job is connected is reported gone; one dropped while the job reconnects is not', async () => {
    const clock = new FakeClock();
    const { reporter, attempts } = fakeReporter(clock);
    const meter = meterWith(clock, reporter);
    const room = new FakeRoom();
    room.remoteParticipants.set(VISITOR, { identity: VISITOR });
    const stop = meterRoomParticipants(room as unknown as Room, meter);
    meter.firstFramePublished();
    await clock.advance(0);
    // The server dies: the job reconnects and its participant list is dropped.
    room.connectionState = ConnectionState.CONN_RECONNECTING;
    room.emit(RoomEvent.ParticipantDisconnected, { identity: VISITOR });
    await clock.advance(2 * MINUTE);
    expect(types(attempts)).toEqual(['avatar_streaming', 'minute 0']); // no visitor_left, no minutes unseen
    // Back, and the visitor is there again; then really leaves.
    room.connectionState = ConnectionState.CONN_CONNECTED;
    room.emit(RoomEvent.ParticipantConnected, { identity: VISITOR });
    await clock.advance(0);
    room.emit(RoomEvent.ParticipantDisconnected, { identity: VISITOR });
    await clock.advance(0);
    expect(types(attempts)).toEqual(['avatar_streaming', 'minute 0', 'minute 2', 'visitor_left']);
    stop();
    await meter.close();
  });
});
