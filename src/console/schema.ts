// The console's sign-in: a password per account (argon2id), and the attempts its limits
// count. The browser sessions a sign-in opens are src/auth/schema.ts. Only hashes are
// stored: a leaked table opens no account.
import { bigserial, index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';

export const consoleLogins = pgTable('console_logins', {
  accountId: text('account_id')
    .primaryKey()
    .references(() => accounts.id, { onDelete: 'cascade' }),
  /** Bun.password (argon2id), with its parameters in the PHC string. */
  passwordHash: text('password_hash').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

/**
 * Attempts the console limits (failed sign-ins, sign-ups), per scope and key, so that every
 * control-plane replica on one database counts the same attempts. Keys are hashed: the table
 * holds no email address or client address. Rows older than their window are deleted as
 * new ones come.
 */
export const consoleAttempts = pgTable(
  'console_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    scope: text('scope').notNull(),
    keyHash: text('key_hash').notNull(),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [index('console_attempts_key_idx').on(t.scope, t.keyHash, t.at)],
);
