// Accounts own everything: identities, sessions, keys and the credit balance. Opening one (its
// first key and grant with it) is src/new-accounts/: it uses auth and credits, which use this.
import { eq } from 'drizzle-orm';
import type { Database } from '../db/index.ts';
import { accounts } from './schema.ts';

export {
  accountsOfOwner,
  ensureTestAccount,
  isTestAccount,
  liveAccountIdOf,
  ownerAccountIds,
  TestFlag,
  testAccountIdOf,
} from './test-mode.ts';

/** Emails are compared lowercased and trimmed. */
export function normalisedEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function accountExists(db: Database, accountId: string): Promise<boolean> {
  const rows = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId));
  return rows.length > 0;
}
