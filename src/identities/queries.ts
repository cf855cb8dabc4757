// Identity rows, always scoped by account: another account's identity is simply not found.
import { and, eq, isNotNull, type SQL } from 'drizzle-orm';
import type { Queryable } from '../db/index.ts';
import { ownedRow } from '../db/owned.ts';
import { identities } from './schema.ts';

export type IdentityRow = typeof identities.$inferSelect;

/** What else an identity must be to be found at all: onboarded (an unfinished create is invisible outside its own request). */
export const identityVisible: SQL = isNotNull(identities.onboardedAt);

/** The account's identities a list shows: the visible ones. */
export function listedIdentities(accountId: string): SQL {
  return and(eq(identities.accountId, accountId), identityVisible)!;
}

export function findIdentity(q: Queryable, accountId: string, identityId: string): Promise<IdentityRow | undefined> {
  return ownedRow(q, identities, accountId, identityId, identityVisible);
}
