// The console's sign-in: a password per account (argon2id); the attempts its limits count are
// src/limits/schema.ts. The browser sessions a sign-in opens are src/auth/schema.ts. Only hashes are
// stored: a leaked table opens no account.
import { pgTable, text } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';
import { belongsTo, createdAt } from '../db/columns.ts';

export const consoleLogins = pgTable('console_logins', {
  accountId: belongsTo('account_id', () => accounts.id).primaryKey(),
  /** Bun.password (argon2id), with its parameters in the PHC string. */
  passwordHash: text('password_hash').notNull(),
  createdAt: createdAt(),
});
