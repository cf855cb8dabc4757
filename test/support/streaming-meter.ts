// The streaming meter's test bench (agent/reports): a clock that moves only when told to, a
// reporter that records every delivery and answers as told, and a meter on both.
import {
  type MeterClock,
  type ReportOutcome,
  StreamingMeter,
  type StreamingMeterOptions,
} from '../../agent/reports/index.ts';
import type { MeterReport } from '../../src/contract/index.ts';
import { recordingLogger } from './agent-log.ts';

export const MINUTE = 60_000;
export const VISITOR = 'visitor_abc';
export const START_DATE = Date.UTC(2025, 0, 1, 12, 0, 0);

/** Monotonic time that moves only when told to, firing due timers in order on the way. */
export class FakeClock implements MeterClock {
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
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export interface Sent {
  report: MeterReport;
  at: number;
}

/** Records every delivery attempt; `answer` decides each outcome (default: accepted). */
export function fakeReporter(
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

export const quietLogger = recordingLogger();
export const warnings = quietLogger.lines;

export function meterWith(
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

export const minutes = (sent: Sent[]) =>
  sent.filter((s) => s.report.type === 'minute').map((s) => [(s.report as { index: number }).index, s.at]);
/** The reports but the usage ones (their own tests below). */
export const types = (sent: Sent[]) =>
  sent
    .filter((s) => s.report.type !== 'usage')
    .map((s) => (s.report.type === 'minute' ? `minute ${s.report.index}` : s.report.type));
export const usages = (sent: Sent[]) =>
  sent.flatMap((s) => (s.report.type === 'usage' ? [{ ...s.report, sentAt: s.at }] : []));
