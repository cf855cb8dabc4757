// Time as the meter sees it, injectable so tests can step through minutes instantly.

export interface MeterClock {
  /** Monotonic milliseconds: minute boundaries are computed from this, so wall-clock jumps cannot move them. */
  now(): number;
  /** Wall-clock time, only for the timestamp in `avatar_streaming`. */
  date(): Date;
  /** Calls `callback` once after `delayMs`; the returned function cancels it. */
  setTimer(delayMs: number, callback: () => void): () => void;
}

export const systemClock: MeterClock = {
  now: () => performance.now(),
  date: () => new Date(),
  setTimer(delayMs, callback) {
    const timer = setTimeout(callback, Math.max(0, delayMs));
    return () => clearTimeout(timer);
  },
};
