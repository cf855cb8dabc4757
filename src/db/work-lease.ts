// Work leases (a row's `worked_until`): the process doing a piece of work (an identity's create
// or retrain, a training upgrade, a document's processing, a recording's join) keeps its lease a
// lease's length ahead, renewing it every third of that, so other processes can tell work in
// flight from work a dead process left behind. Always on the database's clock: every process
// agrees on it, whatever their own clocks say.
import { type SQL, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { log } from '../logging/index.ts';
import { secondsFromNow } from './clock.ts';

/** A lease's end, `seconds` from now. */
export const leaseUntil = (seconds: number): SQL => secondsFromNow(seconds);

/** Whether the lease in `column` has run out (a null lease is no lease: not run out). */
export const leaseRanOut = (column: PgColumn): SQL => sql`${column} < now()`;

/**
 * Calls `renew` (which moves the lease to leaseUntil(seconds)) every third of the lease until
 * the returned function is called; a failed renewal is logged with `fields` and tried again at
 * the next beat. The timer does not keep the process alive.
 */
export function keepRenewing(
  seconds: number,
  renew: () => Promise<unknown>,
  fields: Record<string, unknown>,
): () => void {
  const timer = setInterval(
    () => void renew().catch((error) => log.warn({ err: error, ...fields }, 'renewing a work lease failed')),
    (seconds * 1000) / 3,
  );
  timer.unref();
  return () => clearInterval(timer);
}
