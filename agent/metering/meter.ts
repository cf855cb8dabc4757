// Billing for one session, as seen from its agent job. Time is counted from the avatar's
// first published video frame (t0), or, for a job that took the session over, from the end of
// the minutes its earlier job paid if that is later; minute n covers [t0 + n·I, t0 + (n+1)·I).
// Minute n is reported at its start while the visitor is in the room, or when the visitor
// joins during it, so a session nobody joins is never billed. The meter knows nothing about renderers or
// LiveKit: it is told when the first frame went out and who joined or left.
import type { MeterReport } from '../../src/contract/index.ts';
import { systemClock, type MeterClock } from './clock.ts';
import type { Reporter } from './report-delivery.ts';

export interface MeterLogger {
  warn(message: string): void;
  error(message: string): void;
}

export interface StreamingMeterOptions {
  /** I, the length of one billed minute (`billing_interval_seconds`). */
  intervalSeconds: number;
  /** The LiveKit identity of the session's visitor; other participants do not count. */
  visitorIdentity: string;
  /** Minutes an earlier job of the session already billed: this one's first minute takes the next index. */
  minuteOffset?: number;
  /**
   * Until when those minutes are paid (wall clock): when it is still ahead at the first frame,
   * this job's first minute starts there, so the rest of the minute the earlier job began is
   * not charged again.
   */
  paidUntil?: Date;
  reporter: Reporter;
  clock?: MeterClock;
  /**
   * Waits before each retry of a report that failed with a network error or a 5xx; past its
   * end the last wait repeats: a report is retried until it is delivered, for as long as the
   * session runs, so an outage of the control plane loses no billing (the control plane counts
   * each minute once, however often it arrives). Delivery is in order, so a retrying report
   * holds back the ones after it (the control plane sees avatar_streaming before minute 0).
   */
  retryDelaysMs?: readonly number[];
  /** Once the session ended (close()), how long reports still undelivered are retried before they are given up. */
  closeGraceMs?: number;
  logger?: MeterLogger;
}

export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [500, 1_000, 2_000, 4_000, 5_000];
export const DEFAULT_CLOSE_GRACE_MS = 30_000;

type MeterState = 'metering' | 'credits_exhausted' | 'closed';

export class StreamingMeter {
  readonly #intervalMs: number;
  readonly #visitorIdentity: string;
  readonly #minuteOffset: number;
  readonly #paidUntil: Date | undefined;
  readonly #reporter: Reporter;
  readonly #clock: MeterClock;
  readonly #retryDelaysMs: readonly number[];
  readonly #closeGraceMs: number;
  readonly #logger: MeterLogger;
  /** When close() was called (clock time): undelivered reports are given up past the grace. */
  #closedAt: number | undefined;

  #state: MeterState = 'metering';
  /** Monotonic time of the first published frame. */
  #t0: number | undefined;
  #lastReportedMinute = -1;
  /** Participants currently connected under the visitor's identity (LiveKit keeps it at 0 or 1). */
  #visitorConnections = 0;
  #cancelBoundaryTimer: (() => void) | undefined;

  readonly #queue: MeterReport[] = [];
  #delivery: Promise<void> | undefined;

  constructor(options: StreamingMeterOptions) {
    if (!(options.intervalSeconds > 0)) throw new Error(`intervalSeconds must be positive, got ${options.intervalSeconds}`);
    this.#intervalMs = options.intervalSeconds * 1000;
    this.#visitorIdentity = options.visitorIdentity;
    this.#minuteOffset = options.minuteOffset ?? 0;
    this.#paidUntil = options.paidUntil;
    this.#reporter = options.reporter;
    this.#clock = options.clock ?? systemClock;
    this.#retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.#closeGraceMs = options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
    this.#logger = options.logger ?? console;
  }

  /** True once the control plane answered 402: nothing more is reported. */
  get creditsExhausted(): boolean {
    return this.#state === 'credits_exhausted';
  }

  get visitorPresent(): boolean {
    return this.#visitorConnections > 0;
  }

  /**
   * The renderer published its first video frame at monotonic time `atMs` (the clock's
   * `now()` scale; defaults to now). Later calls are ignored: t0 is set once.
   */
  firstFramePublished(atMs: number = this.#clock.now()): void {
    if (this.#state !== 'metering' || this.#t0 !== undefined) return;
    // Minutes count from the first frame, or from the end of what an earlier job already paid.
    const paidUntil = this.#paidUntil ? this.#paidUntil.getTime() - this.#clock.date().getTime() + this.#clock.now() : -Infinity;
    this.#t0 = Math.max(atMs, paidUntil);
    const at = new Date(this.#clock.date().getTime() - (this.#clock.now() - atMs));
    this.#enqueue({ type: 'avatar_streaming', at: at.toISOString() });
    this.#reportDueMinutes('join');
    this.#scheduleNextBoundary();
  }

  participantConnected(identity: string): void {
    if (identity !== this.#visitorIdentity || this.#state !== 'metering') return;
    this.#visitorConnections++;
    this.#reportDueMinutes('join');
  }

  /** The job joined the room: the control plane stops waiting for an agent. */
  agentJoined(): void {
    this.#enqueue({ type: 'agent_joined' });
  }

  /** The job is leaving a session that goes on (its worker is stopping): the control plane moves or ends it. */
  agentLeaving(): void {
    this.#enqueue({ type: 'agent_leaving' });
  }

  participantDisconnected(identity: string): void {
    if (this.#unsee(identity) && this.#visitorConnections === 0) this.#enqueue({ type: 'visitor_left' });
  }

  /**
   * The visitor went out of sight because the job's own connection to LiveKit broke (a
   * participant list dropped on reconnecting): no minutes while unseen, but no `visitor_left`,
   * which would end the session as the visitor's doing; LiveKit's webhook or the sweep says
   * what really happened (a killed server: `room_closed`).
   */
  participantLost(identity: string): void {
    this.#unsee(identity);
  }

  /** One connection of the visitor fewer in sight; false when it was not the visitor's. */
  #unsee(identity: string): boolean {
    if (identity !== this.#visitorIdentity || this.#state !== 'metering' || this.#visitorConnections === 0) return false;
    this.#visitorConnections--;
    return true;
  }

  /**
   * Stops metering (no further minutes) and resolves once the reports already queued have
   * been delivered or given up on.
   */
  async close(): Promise<void> {
    if (this.#state === 'metering') this.#state = 'closed';
    this.#closedAt ??= this.#clock.now();
    this.#cancelBoundaryTimer?.();
    this.#cancelBoundaryTimer = undefined;
    await this.#delivery;
  }

  #minuteAt(now: number): number {
    return Math.floor((now - this.#t0!) / this.#intervalMs);
  }

  /**
   * On a join only the current minute is due: the minutes before it had nobody to bill.
   * On a boundary every minute since the last report is due, in case this timer ran late
   * while the visitor stayed (a leave and re-join in between reports through 'join').
   */
  #reportDueMinutes(cause: 'join' | 'boundary'): void {
    if (this.#state !== 'metering' || this.#t0 === undefined || !this.visitorPresent) return;
    const current = this.#minuteAt(this.#clock.now());
    const first = cause === 'join' ? current : this.#lastReportedMinute + 1;
    for (let index = Math.max(first, this.#lastReportedMinute + 1); index <= current; index++) {
      this.#enqueue({ type: 'minute', index: this.#minuteOffset + index });
    }
    this.#lastReportedMinute = Math.max(this.#lastReportedMinute, current);
  }

  /** Timers are set from t0 each time, never chained from the last firing, so they cannot drift. */
  #scheduleNextBoundary(): void {
    if (this.#state !== 'metering' || this.#t0 === undefined) return;
    const now = this.#clock.now();
    const nextBoundary = this.#t0 + (this.#minuteAt(now) + 1) * this.#intervalMs;
    this.#cancelBoundaryTimer = this.#clock.setTimer(nextBoundary - now, () => {
      this.#reportDueMinutes('boundary');
      this.#scheduleNextBoundary();
    });
  }

  #enqueue(report: MeterReport): void {
    if (this.#state === 'credits_exhausted') return;
    this.#queue.push(report);
    this.#delivery ??= this.#deliverQueue().finally(() => {
      this.#delivery = undefined;
    });
  }

  async #deliverQueue(): Promise<void> {
    for (let report = this.#queue.shift(); report; report = this.#queue.shift()) {
      await this.#deliver(report);
      if (this.#state === 'credits_exhausted') {
        this.#queue.length = 0;
        return;
      }
    }
  }

  async #deliver(report: MeterReport): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.#reporter(report).catch(() => 'retry' as const);
      switch (outcome) {
        case 'accepted':
          return;
        case 'credits_exhausted':
          // The control plane sends the notice and closes the room; the job only stops reporting.
          this.#logger.warn(`credits exhausted at ${describe(report)}: billing reports stop`);
          this.#state = 'credits_exhausted';
          this.#cancelBoundaryTimer?.();
          this.#cancelBoundaryTimer = undefined;
          return;
        case 'refused':
          this.#logger.warn(`the control plane refused ${describe(report)}; not retrying`);
          return;
        case 'retry': {
          if (this.#closedAt !== undefined && this.#clock.now() - this.#closedAt >= this.#closeGraceMs) {
            this.#logger.error(`${describe(report)} could not be delivered after ${attempt + 1} attempts, the session over; giving up`);
            return;
          }
          const delay = this.#retryDelaysMs[Math.min(attempt, this.#retryDelaysMs.length - 1)] ?? 0;
          await new Promise<void>((resolve) => this.#clock.setTimer(delay, resolve));
        }
      }
    }
  }
}

function describe(report: MeterReport): string {
  return report.type === 'minute' ? `minute ${report.index}` : report.type;
}
