// An account's own rows: every query of the public API is scoped by the caller's account, so
// another account's row is simply not there (a 404, never a 403).
import { and, eq } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Queryable } from './index.ts';

/** A table whose rows belong to an account. */
export type OwnedTable = PgTable & { id: PgColumn; accountId: PgColumn };

/** The row of `table` with this id, if it is the account's. */
export async function ownedRow<T extends OwnedTable>(
  q: Queryable,
  table: T,
  accountId: string,
  id: string,
): Promise<T['$inferSelect'] | undefined> {
  const [row] = (await q
    .select()
    .from(table as PgTable)
    .where(and(eq(table.id, id), eq(table.accountId, accountId)))) as T['$inferSelect'][];
  return row;
}
