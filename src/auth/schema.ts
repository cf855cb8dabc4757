// Console sign-ins as browser sessions (browser-sessions.ts): only the cookie token's hash is
// stored, with the CSRF token the page sends back.
import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';

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
