// Billing for one session, as seen from its agent job (docs/api.md#credits). Minute 0 begins
// when the visitor first receives the avatar: the avatar's first published frame if the
// visitor is already in the room, else the moment they join (frames go out every 40 ms). For a
// job that took the session over, it begins that long later again as was left of the minute
// its earlier job's avatar was lost in. Minute n covers [t0 + n·I, t0 + (n+1)·I); it is
// reported at its start while the visitor is in the room, or when the visitor comes back
// during it, so a session nobody joins is never billed and a visitor who leaves and comes back
// within a minute pays nothing more. Beside the minutes, the meter counts what an invoice
// shows: how long the avatar streamed, and how long the visitor was in the room with it. It
// knows nothing about renderers or LiveKit: it is told when the first frame went out and who
// joined or left.
import type { AgentLeavingReason, MeterReport } from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import { type MeterClock, systemClock } from './clock.ts';
import type { Reporter } from './report-delivery.ts';

/** What the meter logs through: a report the control plane refused or that was given up on. */
export type MeterLogger = Pick<AgentLogger, 'warn' | 'error'>;

export interface StreamingMeterOptions {
  /** I, the length of one billed minute (`billing_interval_seconds`). */
  intervalSeconds: number;
  /** The LiveKit identity of the session's visitor; other participants do not count. */
  visitorIdentity: string;
  /** Minutes an earlier job of the session already billed: this one's first minute takes the next index. */
  minuteOffset?: number;
  /**
   * What was left of the last paid minute when the earlier job's avatar was lost: this job's
   * first minute begins that long after the visitor receives its avatar, so the rest of that
   * minute is not charged again and the time without an avatar is not charged at all.
   */
  paidLeftMs?: number;
  reporter: Reporter<MeterReport>;
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
  /** Where failed reports are told: the job's logger. */
  logger: MeterLogger;
}

export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [500, 1_000, 2_000, 4_000, 5_000];
export const DEFAULT_CLOSE_GRACE_MS = 30_000;

type MeterState = 'metering' | 'credits_exhausted' | 'closed';

export class StreamingMeter {
  readonly #intervalMs: number;
  readonly #visitorIdentity: string;
  readonly #minuteOffset: number;
  readonly #paidLeftMs: number;
  readonly #reporter: Reporter<MeterReport>;
  readonly #clock: MeterClock;
  readonly #retryDelaysMs: readonly number[];
  readonly #closeGraceMs: number;
  readonly #logger: MeterLogger;
  /** When close() was called (clock time): undelivered reports are given up past the grace. */
  #closedAt: number | undefined;

  #state: MeterState = 'metering';
  /** Monotonic time of the first published frame. */
  #firstFrameAt: number | undefined;
  /** Monotonic time minute 0 begins (once the visitor has received the avatar). */
  #t0: number | undefined;
  /** Time the visitor spent in the room with the avatar, closed stretches only. */
  #visitorMs = 0;
  /** Since when the visitor is in the room with the avatar (an open stretch). */
  #visitorSince: number | undefined;
  /** When the visitor last came into the room. */
  #visitorJoinedAt: number | undefined;
  #visitorLeftReported = false;
  /** When the meter stopped counting (close, or the credits ran out). */
  #stoppedAt: number | undefined;
  #leavingReported = false;
  #lastUsage = '';
  #lastReportedMinute = -1;
  /** Participants currently connected under the visitor's identity (LiveKit keeps it at 0 or 1). */
  #visitorConnections = 0;
  #cancelBoundaryTimer: (() => void) | undefined;

  readonly #queue: MeterReport[] = [];
  #delivery: Promise<void> | undefined;

  constructor(options: StreamingMeterOptions) {
    if (!(options.intervalSeconds > 0))
      throw new Error(`intervalSeconds must be positive, got ${options.intervalSeconds}`);
    this.#intervalMs = options.intervalSeconds * 1000;
    this.#visitorIdentity = options.visitorIdentity;
    this.#minuteOffset = options.minuteOffset ?? 0;
    this.#paidLeftMs = Math.max(0, options.paidLeftMs ?? 0);
    this.#reporter = options.reporter;
    this.#clock = options.clock ?? systemClock;
    this.#retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.#closeGraceMs = options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
    this.#logger = options.logger;
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
   * `now()` scale; defaults to now). Later calls are ignored.
   */
  firstFramePublished(atMs: number = this.#clock.now()): void {
    if (this.#state !== 'metering' || this.#firstFrameAt !== undefined) return;
    this.#firstFrameAt = atMs;
    const at = new Date(this.#clock.date().getTime() - (this.#clock.now() - atMs));
    this.#enqueue({ type: 'avatar_streaming', at: at.toISOString() });
    // A visitor who came in before the frame went out (if after it: when the meter heard of it).
    if (this.visitorPresent) this.#visitorReceives(Math.max(atMs, this.#visitorJoinedAt!));
  }

  participantConnected(identity: string): void {
    if (identity !== this.#visitorIdentity || this.#state !== 'metering') return;
    this.#visitorConnections++;
    if (this.#visitorConnections === 1) {
      this.#visitorJoinedAt = this.#clock.now();
      // Back after a visitor_left: the control plane, waiting for them, keeps the session.
      if (this.#visitorLeftReported) this.#enqueue({ type: 'visitor_joined' });
      if (this.#firstFrameAt !== undefined) this.#visitorReceives(this.#visitorJoinedAt);
    }
    this.#reportDueMinutes('join');
  }

  /** From `atMs` the visitor is in the room with the avatar: the first time, minute 0 is set. */
  #visitorReceives(atMs: number): void {
    this.#visitorSince = atMs;
    if (this.#t0 !== undefined) return;
    this.#t0 = atMs + this.#paidLeftMs;
    this.#reportDueMinutes('join');
    this.#scheduleNextBoundary();
  }

  /** The job joined the room: the control plane stops waiting for an agent. */
  agentJoined(): void {
    this.#enqueue({ type: 'agent_joined' });
  }

  /**
   * The job is leaving a session that goes on (its worker is stopping, or LiveKit never received
   * its tracks): the control plane moves or ends it. Its last usage goes first: the move gives
   * the next job the session's reports.
   */
  agentLeaving(reason: AgentLeavingReason = 'worker_stopping'): void {
    if (this.#leavingReported) return;
    this.#leavingReported = true;
    this.#stop();
    this.#enqueue({ type: 'agent_leaving', reason });
  }

  participantDisconnected(identity: string): void {
    if (this.#unsee(identity) && this.#visitorConnections === 0) {
      // The usage first: visitor_left ends the session, and the ending counts what was reported.
      this.#reportUsage();
      this.#enqueue({ type: 'visitor_left' });
      this.#visitorLeftReported = true;
    }
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
    if (identity !== this.#visitorIdentity || this.#state !== 'metering' || this.#visitorConnections === 0)
      return false;
    this.#visitorConnections--;
    if (this.#visitorConnections === 0) this.#closeVisitorStretch(this.#clock.now());
    return true;
  }

  #closeVisitorStretch(atMs: number): void {
    if (this.#visitorSince === undefined) return;
    this.#visitorMs += Math.max(0, atMs - this.#visitorSince);
    this.#visitorSince = undefined;
  }

  /** This job's usage so far: how long its avatar streamed, and the visitor was in the room with it. */
  usage(): { streamedMs: number; visitorMs: number } {
    const now = this.#stoppedAt ?? this.#clock.now();
    const streamedMs = this.#firstFrameAt === undefined ? 0 : Math.max(0, now - this.#firstFrameAt);
    const visitorMs = this.#visitorMs + (this.#visitorSince === undefined ? 0 : Math.max(0, now - this.#visitorSince));
    return { streamedMs: Math.round(streamedMs), visitorMs: Math.round(visitorMs) };
  }

  /** Sends the usage when it changed since the last report (each report carries the whole count). */
  #reportUsage(): void {
    if (this.#firstFrameAt === undefined) return;
    const { streamedMs, visitorMs } = this.usage();
    const going = this.#stoppedAt === undefined;
    const report = {
      streamed_ms: streamedMs,
      visitor_ms: visitorMs,
      streaming: going,
      visitor_present: going && this.#visitorSince !== undefined,
    };
    const key = JSON.stringify(report);
    if (key === this.#lastUsage) return;
    this.#lastUsage = key;
    this.#enqueue({ type: 'usage', ...report, at: this.#clock.date().toISOString() });
  }

  /** Counting stops (the job leaves, or the credits ran out): the last usage is sent. */
  #stop(): void {
    if (this.#stoppedAt !== undefined) return;
    const now = this.#clock.now();
    this.#closeVisitorStretch(now);
    this.#stoppedAt = now;
    this.#reportUsage();
  }

  /**
   * Stops metering (no further minutes) and resolves once the reports already queued have
   * been delivered or given up on.
   */
  async close(): Promise<void> {
    this.#closedAt ??= this.#clock.now();
    this.#stop();
    if (this.#state === 'metering') this.#state = 'closed';
    this.#cancelBoundaryTimer?.();
    this.#cancelBoundaryTimer = undefined;
    await this.#delivery;
  }

  /** The minute `now` falls in; negative before minute 0 (a taken-over session's paid rest). */
  #minuteAt(now: number): number {
    return Math.floor((now - this.#t0!) / this.#intervalMs);
  }

  /**
   * On a join only the current minute is due: the minutes before it had nobody to bill.
   * On a boundary every minute since the last report is due, in case this timer ran late
   * while the visitor stayed (a leave and re-join in between reports through 'join').
   */
  #reportDueMinutes(cause: 'join' | 'boundary', now = this.#clock.now()): void {
    if (this.#state !== 'metering' || this.#t0 === undefined || !this.visitorPresent) return;
    const current = this.#minuteAt(now);
    if (current < 0) return;
    const first = cause === 'join' ? current : this.#lastReportedMinute + 1;
    for (let index = Math.max(first, this.#lastReportedMinute + 1); index <= current; index++) {
      this.#enqueue({ type: 'minute', index: this.#minuteOffset + index });
    }
    this.#lastReportedMinute = Math.max(this.#lastReportedMinute, current);
  }

  /** Timers are set from t0 each time, never chained from the last firing, so they cannot drift. */
  #scheduleNextBoundary(reached = this.#clock.now()): void {
    if (this.#state !== 'metering' || this.#t0 === undefined) return;
    const now = this.#clock.now();
    const nextBoundary = this.#t0 + (this.#minuteAt(Math.max(now, reached)) + 1) * this.#intervalMs;
    this.#cancelBoundaryTimer = this.#clock.setTimer(nextBoundary - now, () => {
      // A timer may fire a fraction of a ms before the clock reads its time: the boundary it
      // was set for is reached all the same (else that minute would be skipped).
      const at = Math.max(this.#clock.now(), nextBoundary);
      this.#reportDueMinutes('boundary', at);
      this.#reportUsage();
      this.#scheduleNextBoundary(at);
    });
  }

  #enqueue(report: MeterReport): void {
    // Out of credits: nothing more is billed, but what was used is still told.
    if (this.#state === 'credits_exhausted' && report.type !== 'usage') return;
    this.#queue.push(report);
    this.#delivery ??= this.#deliverQueue().finally(() => {
      this.#delivery = undefined;
    });
  }

  async #deliverQueue(): Promise<void> {
    for (let report = this.#queue.shift(); report; report = this.#queue.shift()) {
      await this.#deliver(report);
      if (this.#state === 'credits_exhausted') {
        const usage = this.#queue.filter((queued) => queued.type === 'usage');
        this.#queue.length = 0;
        this.#queue.push(...usage);
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
          // The control plane sends the notice and closes the room; the job only stops billing.
          this.#logger.warn(reportFields(report), 'credits exhausted: billing reports stop');
          this.#state = 'credits_exhausted';
          this.#cancelBoundaryTimer?.();
          this.#cancelBoundaryTimer = undefined;
          this.#stop();
          return;
        case 'refused':
          this.#logger.warn(reportFields(report), 'the control plane refused a report; not retrying');
          return;
        case 'retry': {
          if (this.#closedAt !== undefined && this.#clock.now() - this.#closedAt >= this.#closeGraceMs) {
            this.#logger.error(
              { ...reportFields(report), attempts: attempt + 1 },
              'a report could not be delivered, the session over; giving up',
            );
            return;
          }
          const delay = this.#retryDelaysMs[Math.min(attempt, this.#retryDelaysMs.length - 1)] ?? 0;
          await new Promise<void>((resolve) => this.#clock.setTimer(delay, resolve));
        }
      }
    }
  }
}

/** A report as its log lines name it: its type, and a minute's index. */
function reportFields(report: MeterReport): { report: MeterReport['type']; minute?: number } {
  return report.type === 'minute' ? { report: report.type, minute: report.index } : { report: report.type };
}
