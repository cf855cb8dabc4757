// Accounts own everything: identities, sessions, keys and the credit balance.
import { eq } from 'drizzle-orm';
import type { Database } from '../db/index.ts';
import { newId } from '../db/ids.ts';
import { issueApiKey } from '../auth/api-keys.ts';
import { CreditLedger } from '../credits/index.ts';
import { accounts } from './schema.ts';

export interface CreatedAccount {
  account_id: string;
  api_key: string;
}

export class AccountExists extends Error {}

/** Create an account with its first API key and an optional starting grant. */
export async function createAccount(db: Database, input: { email: string; credits?: number }): Promise<CreatedAccount> {
  const email = input.email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new Error(`Not an email address: "${input.email}"`);
  const created = await db.transaction(async (tx) => {
    const existing = await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.email, email));
    if (existing.length) throw new AccountExists(`An account with email ${email} already exists`);
    const id = newId('acc');
    await tx.insert(accounts).values({ id, email });
    const key = await issueApiKey(tx, id, 'default');
    return { account_id: id, api_key: key.api_key };
  });
  if (input.credits && input.credits > 0) {
    await new CreditLedger(db).grant(created.account_id, input.credits, `starter:${created.account_id}`);
  }
  return created;
}

export async function accountExists(db: Database, accountId: string): Promise<boolean> {
  const rows = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId));
  return rows.length > 0;
}
