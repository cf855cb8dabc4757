// The lease on an identity's create or retrain (identities.worked_until): the process doing the
// work keeps it a lease's length ahead, renewing it every third of that, so other processes
// can tell work in flight from work a dead process left behind (recovery.ts).
import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../db/index.ts';
import { log } from '../logging/index.ts';
import { identities } from './schema.ts';

/** The lease's end, as SQL (the database's clock: every process agrees on it). */
export function leaseUntil(seconds: number) {
  return sql`now() + make_interval(secs => ${seconds})`;
}

/** Keeps renewing the identity's lease until the returned function is called. */
export function holdLease(db: Database, identityId: string, seconds: number): () => void {
  const timer = setInterval(
    () =>
      void db
        .update(identities)
        .set({ workedUntil: leaseUntil(seconds) })
        .where(eq(identities.id, identityId))
        .catch((error) => log.warn({ err: error, identity_id: identityId }, 'renewing a work lease failed')),
    (seconds * 1000) / 3,
  );
  timer.unref();
  return () => clearInterval(timer);
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
  return sql`(${identities.workedUntil} < now() or (${identities.workedUntil} is null and ${identities.updatedAt} < now() - make_interval(secs => ${graceSeconds})))`;
}
