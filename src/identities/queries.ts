// Identity rows, always scoped by account: another account's identity is simply not found.
import { and, eq, isNotNull, type SQL } from 'drizzle-orm';
import type { Queryable } from '../db/index.ts';
import { identities } from './schema.ts';

export type IdentityRow = typeof identities.$inferSelect;

/** The account's identities a list shows: onboarded ones only (an unfinished create is invisible outside its own request). */
export function listedIdentities(accountId: string): SQL {
  return and(eq(identities.accountId, accountId), isNotNull(identities.onboardedAt))!;
}

function owned(accountId: string, identityId: string): SQL {
  return and(listedIdentities(accountId), eq(identities.id, identityId))!;
}

export async function findIdentity(
  q: Queryable,
  accountId: string,
  identityId: string,
): Promise<IdentityRow | undefined> {
  const [row] = await q.select().from(identities).where(owned(accountId, identityId));
  return row;
}

export async function deleteIdentity(q: Queryable, accountId: string, identityId: string): Promise<boolean> {
  const rows = await q
    .delete(identities)
    .where(and(eq(identities.accountId, accountId), eq(identities.id, identityId)))
    .returning({ id: identities.id });
  return rows.length > 0;
}
