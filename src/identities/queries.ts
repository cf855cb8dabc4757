// Identity rows, always scoped by account: another account's identity is simply not found.
import { and, desc, eq, isNotNull, lt, or, type SQL } from 'drizzle-orm';
import type { Queryable } from '../db/index.ts';
import { identities } from './schema.ts';

export type IdentityRow = typeof identities.$inferSelect;

/** Onboarded identities only: an unfinished create is invisible outside its own request. */
function owned(accountId: string, identityId: string): SQL {
  return and(eq(identities.accountId, accountId), eq(identities.id, identityId), isNotNull(identities.onboardedAt))!;
}

export async function findIdentity(
  q: Queryable,
  accountId: string,
  identityId: string,
): Promise<IdentityRow | undefined> {
  const [row] = await q.select().from(identities).where(owned(accountId, identityId));
  return row;
}

export async function listIdentities(
  q: Queryable,
  accountId: string,
  page: { limit?: number; after?: { createdAt: Date; id: string } },
): Promise<IdentityRow[]> {
  const conditions = [eq(identities.accountId, accountId), isNotNull(identities.onboardedAt)];
  if (page.after) {
    // Keyset paging over (created_at, id), newest first: stable while identities are added.
    conditions.push(
      or(
        lt(identities.createdAt, page.after.createdAt),
        and(eq(identities.createdAt, page.after.createdAt), lt(identities.id, page.after.id)),
      )!,
    );
  }
  const query = q
    .select()
    .from(identities)
    .where(and(...conditions))
    .orderBy(desc(identities.createdAt), desc(identities.id));
  return page.limit ? query.limit(page.limit) : query;
}

export async function deleteIdentity(q: Queryable, accountId: string, identityId: string): Promise<boolean> {
  const rows = await q
    .delete(identities)
    .where(and(eq(identities.accountId, accountId), eq(identities.id, identityId)))
    .returning({ id: identities.id });
  return rows.length > 0;
}
