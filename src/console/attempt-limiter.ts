// Attempts counted per key (an email, a client address) over a sliding window; past the
// limit, the caller answers 429 until the oldest counted attempt leaves the window. Used for
// failed sign-ins and for sign-ups. Kept in this process's memory: a rate per replica, which
// is what the limits are for (docs/decisions.md).
export interface AttemptLimiterOptions {
  allowed: number;
  windowSeconds: number;
  /** Tests move time forward. */
  now?: () => number;
}

export class AttemptLimiter {
  readonly #attempts = new Map<string, number[]>();
  readonly #options: AttemptLimiterOptions;

  constructor(options: AttemptLimiterOptions) {
    this.#options = options;
  }

  /** Seconds to wait before another attempt for this key; 0: go ahead. */
  retryAfterSeconds(key: string): number {
    const now = this.#now();
    const recent = this.#recent(key, now);
    const { allowed, windowSeconds } = this.#options;
    if (recent.length < allowed) return 0;
    const oldestCounted = recent[recent.length - allowed]!;
    return Math.max(1, Math.ceil((oldestCounted + windowSeconds * 1000 - now) / 1000));
  }

  record(key: string): void {
    const now = this.#now();
    // Keys are dropped as they are read back empty; one never read again goes in a sweep.
    if (this.#attempts.size > 10_000) for (const stale of [...this.#attempts.keys()]) this.#recent(stale, now);
    this.#attempts.set(key, [...this.#recent(key, now), now]);
  }

  clear(key: string): void {
    this.#attempts.delete(key);
  }

  #recent(key: string, now: number): number[] {
    const windowStart = now - this.#options.windowSeconds * 1000;
    const recent = (this.#attempts.get(key) ?? []).filter((at) => at > windowStart);
    if (recent.length) this.#attempts.set(key, recent);
    else this.#attempts.delete(key);
    return recent;
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }
}
