// The API process's event loop is watched (issue 41 point 3): a deliberate stall inside a
// request is logged with that request's route and request id and counted on /metrics; a stall
// with no request in flight is logged as background work; pauses under the threshold are not.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { configureLogging } from '../../src/logging/index.ts';
import { ENGINES, startTestService, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';

const METRICS_TOKEN = 'stall-metrics-token';

/** Holds the event loop: what a parser with a super-linear pattern does to it. */
function holdLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe.each(ENGINES)('event loop stalls on %s', (engine) => {
  let service: TestService;
  let lines: string[] = [];
  /** How long the next readiness check holds the loop. */
  let holdNextCheck = 0;
  beforeAll(async () => {
    service = await startTestService(engine, { env: { EVENT_LOOP_STALL_MS: '300', METRICS_TOKEN } });
    // A check that holds the loop, reached through GET /readyz like any route's handler.
    service.services.readiness.add('held', async () => {
      holdLoop(holdNextCheck);
      holdNextCheck = 0;
    });
  });
  afterEach(() => configureLogging({ level: 'warn', format: 'json' }));
  afterAll(() => service?.stop());

  const stalls = () =>
    lines
      .map((line) => JSON.parse(line) as { msg: string; stall_ms?: number; requests?: Record<string, unknown>[] })
      .filter((entry) => entry.stall_ms !== undefined);
  const stallCount = async () => {
    const text = await (
      await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    return Number(/^likeness_event_loop_stall_seconds_count (\d+)/m.exec(text)?.[1] ?? 0);
  };

  test('a stall in a request names its route and request id, and is counted', async () => {
    lines = [];
    configureLogging({ level: 'warn', format: 'json' }, { write: (line: string) => void lines.push(line) });
    const before = await stallCount();
    await Bun.sleep(3_000); // readiness caches each check 2 s: the next /readyz runs it
    holdNextCheck = 800;
    const answer = await fetch(`${service.url}/readyz`, { headers: { 'x-request-id': 'req_held_by_test' } });
    expect(answer.headers.get('x-request-id')).toBe('req_held_by_test');
    await eventually(() => stalls().length >= 1);
    const stall = stalls().find((s) => s.requests?.some((r) => r.request_id === 'req_held_by_test'));
    expect(stall).toMatchObject({
      msg: 'the event loop was held: requests waited',
      requests: expect.arrayContaining([{ method: 'GET', route: '/readyz', request_id: 'req_held_by_test' }]),
    });
    expect(stall!.stall_ms!).toBeGreaterThanOrEqual(500);
    expect((stall as { in_flight?: number }).in_flight).toBeGreaterThanOrEqual(1);
    expect(await stallCount()).toBeGreaterThan(before);
  });

  test('a stall with no request in flight is reported as background work; short pauses are not', async () => {
    lines = [];
    configureLogging({ level: 'warn', format: 'json' }, { write: (line: string) => void lines.push(line) });
    await Bun.sleep(200); // requests of the test before have answered
    setTimeout(() => holdLoop(100), 0); // under the threshold
    await Bun.sleep(300);
    expect(stalls()).toEqual([]);
    setTimeout(() => holdLoop(700), 0);
    await eventually(() => stalls().length >= 1);
    expect(stalls().length).toBe(1);
    expect(stalls()[0]).toMatchObject({
      msg: 'the event loop was held by background work (no request in flight)',
      in_flight: 0,
      requests: [],
    });
  });
});
