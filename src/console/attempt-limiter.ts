// Attempts counted per key (an email, a client address) over a sliding window; past the
// limit, the caller answers 429 until the oldest counted attempt leaves the window. Used for
// failed sign-ins and for sign-ups. Counted in the database (console_attempts), so replicas
// of the control plane on one Postgres share the count and a restart does not reset it.
import { and, desc, eq, gt, lt } from 'drizzle-orm';
import type { Database } from '../db/index.ts';
import { consoleAttempts } from './schema.ts';

export interface AttemptLimiterOptions {
  /** What is counted ("sign-in-email", "sign-up-address", …): one table holds every limiter. */
  scope: string;
  allowed: number;
  windowSeconds: number;
  /** Tests move time forward. */
  now?: () => number;
}

const hashKey = (key: string) => new Bun.CryptoHasher('sha256').update(key).digest('hex');

export class AttemptLimiter {
  readonly #db: Database;
  readonly #options: AttemptLimiterOptions;

  constructor(db: Database, options: AttemptLimiterOptions) {
    this.#db = db;
    this.#options = options;
  }

  /** Seconds to wait before another attempt for this key; 0: go ahead. */
  async retryAfterSeconds(key: string): Promise<number> {
    const { scope, allowed, windowSeconds } = this.#options;
    const now = this.#now();
    // The newest `allowed` attempts in the window: with that many, the oldest of them decides.
    const recent = await this.#db
      .select({ at: consoleAttempts.at })
      .from(consoleAttempts)
      .where(and(eq(consoleAttempts.scope, scope), eq(consoleAttempts.keyHash, hashKey(key)), gt(consoleAttempts.at, new Date(now - windowSeconds * 1000))))
      .orderBy(desc(consoleAttempts.at))
      .limit(allowed);
    if (recent.length < allowed) return 0;
    const oldestCounted = recent[recent.length - 1]!.at.getTime();
    return Math.max(1, Math.ceil((oldestCounted + windowSeconds * 1000 - now) / 1000));
  }

  async record(key: string): Promise<void> {
    const { scope, windowSeconds } = this.#options;
    const now = this.#now();
    await this.#db.insert(consoleAttempts).values({ scope, keyHash: hashKey(key), at: new Date(now) });
    // What has left the window counts for nothing: the table keeps only live attempts.
    await this.#db.delete(consoleAttempts).where(and(eq(consoleAttempts.scope, scope), lt(consoleAttempts.at, new Date(now - windowSeconds * 1000))));
  }

  async clear(key: string): Promise<void> {
    await this.#db.delete(consoleAttempts).where(and(eq(consoleAttempts.scope, this.#options.scope), eq(consoleAttempts.keyHash, hashKey(key))));
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }
}

/**
 * Failed password checks (sign-in, and the current password at a change), per email and,
 * four times as many, per client address (one office, several people).
 */
export class SignInThrottle {
  readonly #byEmail: AttemptLimiter;
  readonly #byAddress: AttemptLimiter;

  constructor(db: Database, options: { failuresAllowed: number; windowSeconds: number }) {
    const { failuresAllowed, windowSeconds } = options;
    this.#byEmail = new AttemptLimiter(db, { scope: 'sign-in-email', allowed: failuresAllowed, windowSeconds });
    this.#byAddress = new AttemptLimiter(db, { scope: 'sign-in-address', allowed: failuresAllowed * 4, windowSeconds });
  }

  /** Seconds to wait before checking a password for this email from this address; 0: go ahead. */
  async retryAfterSeconds(email: string, address: string): Promise<number> {
    return Math.max(await this.#byEmail.retryAfterSeconds(email), await this.#byAddress.retryAfterSeconds(address));
  }

  async recordFailure(email: string, address: string): Promise<void> {
    await this.#byEmail.record(email);
    await this.#byAddress.record(address);
  }

  /** A correct password clears the email's failures (not the address's). */
  async clear(email: string): Promise<void> {
    await this.#byEmail.clear(email);
  }
}
