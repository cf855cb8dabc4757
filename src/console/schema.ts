// The console's sign-in: a password per account (argon2id) and the browser sessions that a
// sign-in opens. Only hashes are stored: a leaked table opens no account.
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

export const consoleSessions = pgTable(
  'console_sessions',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** SHA-256 of the cookie's token; the token itself lives only in the browser's httpOnly cookie. */
    tokenHash: text('token_hash').notNull().unique(),
    /** Sent back by the page in X-CSRF-Token on every change: another site cannot read it. */
    csrfToken: text('csrf_token').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [index('console_sessions_account_idx').on(t.accountId)],
);

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
