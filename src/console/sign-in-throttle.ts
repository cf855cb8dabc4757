// Failed console sign-ins are counted per email and per client address over a sliding window;
// past the limit, sign-in answers 429 until the oldest failure leaves the window. Kept in this
// process's memory: a guess rate per replica, which is what the limit is for (docs/decisions.md).
export interface SignInThrottleOptions {
  failuresAllowed: number;
  windowSeconds: number;
  /** Tests move time forward. */
  now?: () => number;
}

/** An address may fail this many times the per-email limit (one office, several people). */
const ADDRESS_FACTOR = 4;

export class SignInThrottle {
  readonly #failures = new Map<string, number[]>();
  readonly #options: SignInThrottleOptions;

  constructor(options: SignInThrottleOptions) {
    this.#options = options;
  }

  /** Seconds to wait before another attempt for this email from this address; 0: go ahead. */
  retryAfterSeconds(email: string, address: string): number {
    return Math.max(this.#wait(`email:${email}`, this.#options.failuresAllowed), this.#wait(`address:${address}`, this.#options.failuresAllowed * ADDRESS_FACTOR));
  }

  failed(email: string, address: string): void {
    const now = this.#now();
    // Keys are dropped as they are read back empty; one never read again goes in a sweep.
    if (this.#failures.size > 10_000) for (const key of [...this.#failures.keys()]) this.#recent(key, now);
    for (const key of [`email:${email}`, `address:${address}`]) this.#failures.set(key, [...this.#recent(key, now), now]);
  }

  /** A correct password clears the email's failures (not the address's). */
  succeeded(email: string): void {
    this.#failures.delete(`email:${email}`);
  }

  #wait(key: string, allowed: number): number {
    const now = this.#now();
    const recent = this.#recent(key, now);
    if (recent.length < allowed) return 0;
    const oldestCounted = recent[recent.length - allowed]!;
    return Math.max(1, Math.ceil((oldestCounted + this.#options.windowSeconds * 1000 - now) / 1000));
  }

  #recent(key: string, now: number): number[] {
    const windowStart = now - this.#options.windowSeconds * 1000;
    const recent = (this.#failures.get(key) ?? []).filter((at) => at > windowStart);
    if (recent.length) this.#failures.set(key, recent);
    else this.#failures.delete(key);
    return recent;
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }
}
