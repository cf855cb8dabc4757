// An identity create or retrain against the account's limits (src/limits): trainings at once
// (the account's identities being created or retrained) and per hour (limit_attempts, failed
// ones included: a refused photo cost its decoding too). A test account's trainings count with
// its live account's, against the live account's limits (src/accounts/test-mode.ts).
import { and, count, inArray } from 'drizzle-orm';
import { liveAccountIdOf, ownerAccountIds } from '../accounts/index.ts';
import type { Database, Queryable } from '../db/index.ts';
import { type AccountLimits, AttemptLimiter, limitReached } from '../limits/index.ts';
import { identities } from './schema.ts';

/** What a 429 for trainings at once tells a client to wait: a training takes seconds. */
const TRAINING_RETRY_AFTER_SECONDS = 10;

/** The hourly count of identity creates and retrains, per account. */
export function trainingAttempts(db: Database): AttemptLimiter {
  return new AttemptLimiter(db, { scope: 'identity-training', allowed: 0, windowSeconds: 3600 });
}

/**
 * Throws 429 when the account may not start another training now; otherwise counts this one
 * for the hour. Run it in the transaction that holds the account's lock (lockAccountLimits).
 */
export async function admitTraining(
  tx: Queryable,
  accountId: string,
  limits: AccountLimits,
  attempts: AttemptLimiter,
): Promise<void> {
  if (limits.concurrent_identity_creates > 0) {
    const [row] = await tx
      .select({ training: count() })
      .from(identities)
      .where(
        and(
          inArray(identities.accountId, ownerAccountIds(accountId)),
          inArray(identities.status, ['created', 'training']),
        ),
      );
    if ((row?.training ?? 0) >= limits.concurrent_identity_creates) {
      throw limitReached(
        `This account has ${limits.concurrent_identity_creates} identities training, its limit`,
        TRAINING_RETRY_AFTER_SECONDS,
      );
    }
  }
  if (limits.identity_creates_per_hour > 0) {
    const taken = await attempts.take(liveAccountIdOf(accountId), limits.identity_creates_per_hour, tx);
    if ('wait' in taken)
      throw limitReached(
        `This account created or retrained ${limits.identity_creates_per_hour} identities in the last hour, its limit`,
        taken.wait,
      );
  }
}
