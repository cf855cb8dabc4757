// The lease on an identity's create or retrain (identities.worked_until, src/db/work-lease.ts),
// so other processes can tell work in flight from work a dead process left behind (recovery.ts).
import { and, eq, sql } from 'drizzle-orm';
import { secondsAgo } from '../db/clock.ts';
import type { Database } from '../db/index.ts';
import { keepRenewing, leaseUntil } from '../db/work-lease.ts';
import { identities } from './schema.ts';

export { leaseUntil };

/** Keeps renewing the identity's lease until the returned function is called. */
export function holdLease(db: Database, identityId: string, seconds: number): () => void {
  return keepRenewing(
    seconds,
    () =>
      db
        .update(identities)
        .set({ workedUntil: leaseUntil(seconds) })
        .where(eq(identities.id, identityId)),
    { identity_id: identityId },
  );
}

/** Takes an orphaned retrain's lease: true for the one process that got it. */
export async function claimOrphanedRetrain(
  db: Database,
  identityId: string,
  seconds: number,
  graceSeconds: number,
  ignoreLeases = false,
): Promise<boolean> {
  const [claimed] = await db
    .update(identities)
    .set({ workedUntil: leaseUntil(seconds) })
    .where(and(eq(identities.id, identityId), eq(identities.status, 'training'), orphaned(graceSeconds, ignoreLeases)))
    .returning({ id: identities.id });
  return Boolean(claimed);
}

/**
 * Work nobody holds: its lease ran out, or (rows from before leases) it was untouched for
 * `graceSeconds`. `graceSeconds` 0 with `ignoreLeases` is the embedded database at start:
 * one process, so whatever is unfinished is orphaned.
 */
export function orphaned(graceSeconds: number, ignoreLeases = false) {
  if (ignoreLeases) return sql`true`;
  return sql`(${identities.workedUntil} < now() or (${identities.workedUntil} is null and ${identities.updatedAt} < ${secondsAgo(graceSeconds)}))`;
}
