// What one account may do at once and per window (docs/api.md#limits), so that one account
// cannot take the whole fleet of agent workers or the training CPU. Service defaults come from
// the configuration (LIMIT_*); the operator may set an account's own (`likeness limits set`).
// 0 means no limit.
import { eq } from 'drizzle-orm';
import { liveAccountIdOf } from '../accounts/index.ts';
import { accounts } from '../accounts/schema.ts';
import type { AccountLimits } from '../config.ts';
import type { Queryable } from '../db/index.ts';
import { ApiError } from '../http/errors.ts';

export type { AccountLimits };

export const LIMIT_NAMES = [
  'concurrent_sessions',
  'session_starts_per_minute',
  'concurrent_identity_creates',
  'identity_creates_per_hour',
] as const satisfies ReadonlyArray<keyof AccountLimits>;

/** The account's limits: its own where the operator set them, the service's otherwise. */
export function limitsOf(defaults: AccountLimits, own: Partial<AccountLimits> | null | undefined): AccountLimits {
  return {
    ...defaults,
    ...Object.fromEntries(Object.entries(own ?? {}).filter(([, value]) => typeof value === 'number')),
  };
}

/** Where an account's own limits are kept: its live account's row (a test account shares them). */
function limitsRow(q: Queryable, accountId: string) {
  return q
    .select({ limits: accounts.limits })
    .from(accounts)
    .where(eq(accounts.id, liveAccountIdOf(accountId)));
}

/**
 * The account's limits, read with its row locked until the transaction ends: checks and the
 * work they admit (a session row, an identity row) happen one request at a time per account,
 * across every control-plane replica on the database, so parallel requests cannot all pass.
 * A test account's are its live account's, under the live row's lock: both modes' requests
 * queue on one lock and count together (src/accounts/test-mode.ts).
 */
export async function lockAccountLimits(
  tx: Queryable,
  accountId: string,
  defaults: AccountLimits,
): Promise<AccountLimits> {
  const [row] = await limitsRow(tx, accountId).for('update');
  return limitsOf(defaults, row?.limits);
}

/** The account's limits, unlocked: for an early refusal before costly work (the locked check decides). */
export async function readAccountLimits(
  q: Queryable,
  accountId: string,
  defaults: AccountLimits,
): Promise<AccountLimits> {
  const [row] = await limitsRow(q, accountId);
  return limitsOf(defaults, row?.limits);
}

/** 429 with Retry-After (whole seconds, at least 1) and `{"detail"}`. */
export function limitReached(detail: string, retryAfterSeconds: number): ApiError {
  const wait = Math.max(1, Math.ceil(retryAfterSeconds));
  return new ApiError(429, `${detail}; retry in ${wait} s`, { 'retry-after': String(wait) });
}

/**
 * Seconds until the oldest of the newest `allowed` events (timestamps, newest first) leaves a
 * window of `windowSeconds`; 0 while fewer than `allowed` are in it.
 */
export function windowWait(newestFirst: Date[], allowed: number, windowSeconds: number, now = Date.now()): number {
  if (allowed <= 0 || newestFirst.length < allowed) return 0;
  return (newestFirst[allowed - 1]!.getTime() + windowSeconds * 1000 - now) / 1000;
}
