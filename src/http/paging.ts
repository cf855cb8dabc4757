// The API's paged lists (docs/api.md#paging): a page of the caller's rows (src/db/paging.ts),
// 422 for an `after` not in the list, and, while another page follows, a `Link` header that
// names it. Most lists are the plainest kind, every row the caller has (ownedList).
import { eq } from 'drizzle-orm';
import type { Queryable } from '../db/index.ts';
import type { OwnedTable } from '../db/owned.ts';
import { keysetPage, type Page, type PagedTable, type PageRequest } from '../db/paging.ts';
import { invalid } from './errors.ts';

export interface ListRequest extends PageRequest {
  /** What `after` must be, for the 422 when it is not in the list. */
  unknownAfter: string;
}

/** Where a list is served, to name its next page. */
export interface ListLink {
  set: { headers: Record<string, string | number> };
  /** The list's path (`/v1/sessions`). */
  path: string;
  /** The request's other query fields, repeated on the next page (a filter). */
  query?: Record<string, string | number | undefined>;
}

/**
 * A list route's page: 422 `unknown_cursor` on `["query","after"]` when `after` is not in the
 * list, and while another page follows, `Link: <path?limit=…&after=…>; rel="next"` (the same
 * query, `after` the last row's id).
 */
export async function listPage<T extends PagedTable>(
  q: Queryable,
  table: T,
  request: ListRequest,
  link: ListLink,
): Promise<Page<T['$inferSelect']>> {
  const page = await keysetPage(q, table, request);
  if (!page) throw invalid(['query', 'after'], request.unknownAfter, 'unknown_cursor');
  const last = page.rows.at(-1) as { id: string } | undefined;
  if (page.hasMore && last && request.limit !== undefined) {
    const next = new URLSearchParams({ limit: String(request.limit), after: last.id });
    for (const [name, value] of Object.entries(link.query ?? {}))
      if (value !== undefined && !next.has(name)) next.set(name, String(value));
    link.set.headers.link = `<${link.path}?${next}>; rel="next"`;
  }
  return page;
}

/** What a list of the caller's rows reads of its request: the account, `limit` and `after`, where to link. */
interface OwnedListContext {
  caller: { accountId: string };
  query: { limit?: number; after?: string };
  set: ListLink['set'];
}

/**
 * The handler of a plain `GET /v1/<things>`: a page of the caller's rows of `table`, unfiltered,
 * each presented. `defaultLimit`: rows per page when the query gives no `limit` (none: every row).
 */
export function ownedList<T extends PagedTable & OwnedTable, Presented>(
  q: Queryable,
  table: T,
  present: (row: T['$inferSelect']) => Presented,
  options: { path: string; unknownAfter: string; defaultLimit?: number },
) {
  return async ({ caller, query, set }: OwnedListContext): Promise<Presented[]> => {
    const { rows } = await listPage(
      q,
      table,
      {
        scope: eq(table.accountId, caller.accountId),
        limit: query.limit ?? options.defaultLimit,
        after: query.after,
        unknownAfter: options.unknownAfter,
      },
      { set, path: options.path },
    );
    return rows.map(present);
  };
}
