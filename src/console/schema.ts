// The console's sign-in: a password per account (argon2id); the attempts its limits count are
// src/limits/schema.ts. The browser sessions a sign-in opens are src/auth/schema.ts. Only hashes are
// stored: a leaked table opens no account.
import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';

export const consoleLogins = pgTable('console_logins', {
  accountId: text('account_id')
    .primaryKey()
    .references(() => accounts.id, { onDelete: 'cascade' }),
  /** Bun.password (argon2id), with its parameters in the PHC string. */
  passwordHash: text('password_hash').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});
