// Opening an account: the account, its first API key and its starting grant in one transaction,
// for the operator (admin/, the CLI) and the console's sign-up. Apart from accounts/ because it
// uses auth/ (the key) and credits/ (the grant), and both use accounts/.
import { eq } from 'drizzle-orm';
import { normalisedEmail } from '../accounts/index.ts';
import { accounts } from '../accounts/schema.ts';
import { issueApiKey } from '../auth/index.ts';
import { CreditLedger } from '../credits/index.ts';
import { newId } from '../db/ids.ts';
import type { Database, Queryable } from '../db/index.ts';

export interface CreatedAccount {
  account_id: string;
  api_key: string;
}

export class AccountExists extends Error {}

/**
 * Create an account with its first API key and an optional starting grant, all in one
 * transaction; `alongside` adds more rows to it (the console's password), so a failure
 * leaves no account behind.
 */
export async function createAccount(
  db: Database,
  input: { email: string; credits?: number; keyName?: string },
  alongside?: (tx: Queryable, accountId: string) => Promise<void>,
): Promise<CreatedAccount & { key_id: string }> {
  const email = normalisedEmail(input.email);
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new Error(`Not an email address: "${input.email}"`);
  return db.transaction(async (tx) => {
    const existing = await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.email, email));
    if (existing.length) throw new AccountExists(`An account with email ${email} already exists`);
    const id = newId('acc');
    await tx.insert(accounts).values({ id, email });
    const key = await issueApiKey(tx, id, input.keyName ?? 'default');
    if (input.credits && input.credits > 0) {
      await new CreditLedger(db).credit(tx, {
        accountId: id,
        amount: input.credits,
        kind: 'grant',
        reference: `starter:${id}`,
      });
    }
    await alongside?.(tx, id);
    return { account_id: id, api_key: key.api_key, key_id: key.key_id };
  });
}
