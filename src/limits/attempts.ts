// Attempts counted per key (an email, a client address, an account) over a sliding window;
// past the limit, the caller answers 429 until the oldest counted attempt leaves the window.
// Used for failed sign-ins, sign-ups and identity creates. Counted in the database
// (limit_attempts), so replicas of the control plane on one Postgres share the count and a
// restart does not reset it. `take` checks and records at once, under a lock per key: of
// parallel attempts exactly as many as allowed pass.
import { and, desc, eq, gt, lt, sql } from 'drizzle-orm';
import { sha256Hex } from '../contract/index.ts';
import type { Database, Queryable } from '../db/index.ts';
import { windowWait } from './account-limits.ts';
import { limitAttempts } from './schema.ts';

export interface AttemptLimiterOptions {
  /** What is counted ("sign-in-email", "sign-up-address", …): one table holds every limiter. */
  scope: string;
  allowed: number;
  windowSeconds: number;
  /** Tests move time forward. */
  now?: () => number;
}

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
      .select({ at: limitAttempts.at })
      .from(limitAttempts)
      .where(
        and(
          eq(limitAttempts.scope, scope),
          eq(limitAttempts.keyHash, sha256Hex(key)),
          gt(limitAttempts.at, new Date(now - windowSeconds * 1000)),
        ),
      )
      .orderBy(desc(limitAttempts.at))
      .limit(allowed);
    const wait = windowWait(
      recent.map((r) => r.at),
      allowed,
      windowSeconds,
      now,
    );
    return wait > 0 ? Math.max(1, Math.ceil(wait)) : 0;
  }

  /**
   * Checks and records one attempt atomically (a transaction holding a lock on the scope and
   * key): the attempt's id when it was allowed (`release` can take it back), else the seconds
   * to wait. `allowed` overrides the limiter's (an account's own limit); 0 or less: no limit.
   */
  async take(key: string, allowed = this.#options.allowed, q?: Queryable): Promise<{ id: number } | { wait: number }> {
    const { scope, windowSeconds } = this.#options;
    const run = async (tx: Queryable) => {
      const keyHash = sha256Hex(key);
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${scope}:${keyHash}`}, 0))`);
      const now = this.#now();
      if (allowed > 0) {
        const recent = await tx
          .select({ at: limitAttempts.at })
          .from(limitAttempts)
          .where(
            and(
              eq(limitAttempts.scope, scope),
              eq(limitAttempts.keyHash, keyHash),
              gt(limitAttempts.at, new Date(now - windowSeconds * 1000)),
            ),
          )
          .orderBy(desc(limitAttempts.at))
          .limit(allowed);
        if (recent.length >= allowed)
          return {
            wait: Math.max(
              1,
              Math.ceil(
                windowWait(
                  recent.map((r) => r.at),
                  allowed,
                  windowSeconds,
                  now,
                ),
              ),
            ),
          };
      }
      const [row] = await tx
        .insert(limitAttempts)
        .values({ scope, keyHash, at: new Date(now) })
        .returning({ id: limitAttempts.id });
      await tx
        .delete(limitAttempts)
        .where(and(eq(limitAttempts.scope, scope), lt(limitAttempts.at, new Date(now - windowSeconds * 1000))));
      return { id: row!.id };
    };
    // Inside the caller's transaction when given one (the lock lasts until it ends).
    return q ? run(q) : this.#db.transaction(run);
  }

  /** Takes back an attempt `take` recorded (it turned out not to count, e.g. a correct password). */
  async release(id: number): Promise<void> {
    await this.#db.delete(limitAttempts).where(eq(limitAttempts.id, id));
  }

  async record(key: string): Promise<void> {
    const { scope, windowSeconds } = this.#options;
    const now = this.#now();
    await this.#db.insert(limitAttempts).values({ scope, keyHash: sha256Hex(key), at: new Date(now) });
    // What has left the window counts for nothing: the table keeps only live attempts.
    await this.#db
      .delete(limitAttempts)
      .where(and(eq(limitAttempts.scope, scope), lt(limitAttempts.at, new Date(now - windowSeconds * 1000))));
  }

  async clear(key: string): Promise<void> {
    await this.#db
      .delete(limitAttempts)
      .where(and(eq(limitAttempts.scope, this.#options.scope), eq(limitAttempts.keyHash, sha256Hex(key))));
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

  /**
   * Takes an attempt for this email and address before the password is checked (of parallel
   * guesses only as many as allowed get that far), or the seconds to wait. A correct password
   * gives the attempt back (`release`) and clears the email's failures.
   */
  async take(email: string, address: string): Promise<{ release(): Promise<void> } | { wait: number }> {
    const byEmail = await this.#byEmail.take(email);
    if ('wait' in byEmail) return byEmail;
    const byAddress = await this.#byAddress.take(address);
    if ('wait' in byAddress) {
      await this.#byEmail.release(byEmail.id);
      return byAddress;
    }
    return {
      release: async () => {
        await this.#byEmail.release(byEmail.id);
        await this.#byAddress.release(byAddress.id);
        await this.#byEmail.clear(email);
      },
    };
  }
}
