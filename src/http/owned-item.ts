// The handlers of `GET` and `DELETE /v1/<things>/{id}` on rows the caller owns (src/db/owned.ts):
// every feature looks its row up and answers 404 the same way, and presents the row its own way.
import type { Queryable } from '../db/index.ts';
import { deleteOwned, findOwned, type OwnedTable } from '../db/owned.ts';

/** What an item route reads of its request: the account, and the row's id among the path's params. */
interface OwnedItemContext<Id extends string> {
  caller: { accountId: string };
  params: Record<Id, string>;
}

/**
 * The account's row of `table` named by the path param `idParam`, a 404 naming `what` when it is
 * not the caller's: `find` for a feature's other routes, `read` and `remove` as handlers.
 */
export function ownedItem<T extends OwnedTable, Id extends string, Presented>(
  q: Queryable,
  table: T,
  idParam: Id,
  what: string,
  present: (row: T['$inferSelect']) => Presented,
) {
  const find = (accountId: string, id: string) => findOwned(q, table, accountId, id, what);
  return {
    find,
    /** `GET …/{id}`: the row, presented. */
    read: async ({ caller, params }: OwnedItemContext<Id>): Promise<Presented> =>
      present(await find(caller.accountId, params[idParam])),
    /** `DELETE …/{id}`: 204; `afterwards` lets go of what the deleted row still had running. */
    remove:
      (afterwards?: (id: string) => void) =>
      async ({ caller, params, set }: OwnedItemContext<Id> & { set: { status?: number | string } }) => {
        await deleteOwned(q, table, caller.accountId, params[idParam], what);
        afterwards?.(params[idParam]);
        set.status = 204;
      },
  };
}
