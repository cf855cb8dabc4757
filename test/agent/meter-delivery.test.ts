// The streaming meter's reports on their way (agent/reports): retried while the control plane
// fails, dropped when it refuses, the HTTP reporter's outcomes, and the room's participants
// feeding the meter. Its minutes and usage: minute-metering.test.ts.
import { afterEach, describe, expect, test } from 'bun:test';
import { EventEmitter } from 'node:events';
import { ConnectionState, type Room, RoomEvent } from '@livekit/rtc-node';
import { httpReporter, meterRoomParticipants, outcomeOf, type ReportOutcome } from '../../agent/reports/index.ts';
import type { MeterReport } from '../../src/contract/index.ts';
import { meterOnFakeClock } from '../support/meter-on-fake-clock.ts';
import { FakeClock, fakeReporter, MINUTE, meterWith, types, VISITOR, warnings } from '../support/streaming-meter.ts';

afterEach(() => {
  warnings.length = 0;
});

describe('delivery', () => {
  /** The visitor in the room and the avatar streaming for a minute, the control plane answering as `answer` says. */
  async function aMinuteStreamed(answer: (report: MeterReport) => ReportOutcome) {
    const metered = meterOnFakeClock(answer);
    metered.meter.participantConnected(VISITOR);
    metered.meter.firstFramePublished();
    await metered.clock.advance(MINUTE);
    return metered;
  }

  test('a 402 stops every further report', async () => {
    const { clock, attempts, meter } = await aMinuteStreamed((report) =>
      report.type === 'minute' && report.index === 1 ? 'credits_exhausted' : 'accepted',
    );
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
    const { clock, attempts, meter } = meterOnFakeClock(
      (report) => (report.type === 'visitor_left' ? 'retry' : 'accepted'),
      { retryDelaysMs: [1_000], closeGraceMs: 5_000 },
    );
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
    const { attempts, meter } = await aMinuteStreamed((report) =>
      report.type === 'minute' && report.index === 0 ? 'refused' : 'accepted',
    );
    expect(types(attempts)).toEqual(['avatar_streaming', 'minute 0', 'minute 1']);
    await meter.close();
  });

  test('close() stops the minutes and waits for reports still being delivered', async () => {
    const { clock, attempts, meter } = meterOnFakeClock((report, attempt) =>
      report.type === 'visitor_left' && attempt === 0 ? 'retry' : 'accepted',
    );
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
    const { clock, attempts, meter } = meterOnFakeClock();
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
