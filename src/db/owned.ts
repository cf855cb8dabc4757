// An account's own rows: every query of the public API is scoped by the caller's account, so
// another account's row is simply not there (a 404, never a 403).
import { and, eq, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { notFound } from '../http/errors.ts';
import type { Queryable } from './index.ts';

/** A table whose rows belong to an account. */
export type OwnedTable = PgTable & { id: PgColumn; accountId: PgColumn };

/**
 * This id, and the account's: how every owned lookup, update and delete names its row (a lint
 * rule, test/architecture/lint/one-owned-row.grit, refuses it written by hand).
 */
export function isOwned(table: OwnedTable, accountId: string, id: string, visible?: SQL): SQL {
  return and(eq(table.id, id), eq(table.accountId, accountId), visible)!;
}

/**
 * The row of `table` with this id, if it is the account's; `visible`: what else a row must be to
 * be seen at all (an identity: onboarded, src/identities/queries.ts).
 */
export async function ownedRow<T extends OwnedTable>(
  q: Queryable,
  table: T,
  accountId: string,
  id: string,
  visible?: SQL,
): Promise<T['$inferSelect'] | undefined> {
  const [row] = (await q
    .select()
    .from(table as PgTable)
    .where(isOwned(table, accountId, id, visible))) as T['$inferSelect'][];
  return row;
}

/**
 * The account's row of `table` with this id, or a 404 naming `what` ("Session not found"): the
 * lookup behind every `/v1/…/{id}` route. Another account's row is a 404 as well.
 */
export async function findOwned<T extends OwnedTable>(
  q: Queryable,
  table: T,
  accountId: string,
  id: string,
  what: string,
  visible?: SQL,
): Promise<T['$inferSelect']> {
  const row = await ownedRow(q, table, accountId, id, visible);
  if (!row) throw notFound(what);
  return row;
}

/** Deletes the account's row of `table` with this id; whether there was one. */
export async function deleteOwnedRow(q: Queryable, table: OwnedTable, accountId: string, id: string): Promise<boolean> {
  const deleted = await q
    .delete(table)
    .where(isOwned(table, accountId, id))
    .returning({ id: table.id });
  return deleted.length > 0;
}

/** Deletes the account's row of `table` with this id, or a 404 naming `what`: every `DELETE /v1/…/{id}`. */
export async function deleteOwned(
  q: Queryable,
  table: OwnedTable,
  accountId: string,
  id: string,
  what: string,
): Promise<void> {
  if (!(await deleteOwnedRow(q, table, accountId, id))) throw notFound(what);
}
