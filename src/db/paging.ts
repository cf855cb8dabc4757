// Keyset paging (docs/api.md#paging): newest first over (created_at, id), `limit` rows after
// the row `after` names (the last of the page before), which stays stable while rows are added.
// The API's lists page with src/http/paging.ts, on top of this.
import { and, desc, eq, lt, or, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Queryable } from './index.ts';

/** A table a list pages through: rows with an id and a creation time. */
export type PagedTable = PgTable & { id: PgColumn; createdAt: PgColumn };

export interface PageRequest {
  /** The rows the caller may list (their account's): the row `after` names must be one of them. */
  scope: SQL;
  /** Narrows this list only (a status): the row `after` names need not pass it. */
  filter?: SQL;
  /** Rows per page; undefined: every row, in one page. */
  limit?: number;
  after?: string;
}

export interface Page<Row> {
  rows: Row[];
  /** Another page follows. */
  hasMore: boolean;
}

/** One page of `table`, newest first; undefined when `after` names no row in scope. */
export async function keysetPage<T extends PagedTable>(
  q: Queryable,
  table: T,
  { scope, filter, limit, after }: PageRequest,
): Promise<Page<T['$inferSelect']> | undefined> {
  const conditions = [scope];
  if (filter) conditions.push(filter);
  if (after !== undefined) {
    const [cursor] = await q
      .select({ createdAt: table.createdAt, id: table.id })
      .from(table as PgTable)
      .where(and(scope, eq(table.id, after)));
    if (!cursor) return undefined;
    conditions.push(
      or(lt(table.createdAt, cursor.createdAt), and(eq(table.createdAt, cursor.createdAt), lt(table.id, cursor.id)))!,
    );
  }
  const query = q
    .select()
    .from(table as PgTable)
    .where(and(...conditions))
    .orderBy(desc(table.createdAt), desc(table.id));
  // One more than the page: whether another follows.
  const rows = (await (limit === undefined ? query : query.limit(limit + 1))) as T['$inferSelect'][];
  return limit === undefined ? { rows, hasMore: false } : { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}
