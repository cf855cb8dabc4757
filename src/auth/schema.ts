// Console sign-ins as browser sessions (browser-sessions.ts): only the cookie token's hash is
// stored, with the CSRF token the page sends back.
import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';
import { belongsTo, createdAt, instant } from '../db/columns.ts';

export const consoleSessions = pgTable(
  'console_sessions',
  {
    id: text('id').primaryKey(),
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    /** SHA-256 of the cookie's token; the token itself lives only in the browser's httpOnly cookie. */
    tokenHash: text('token_hash').notNull().unique(),
    /** Sent back by the page in X-CSRF-Token on every change: another site cannot read it. */
    csrfToken: text('csrf_token').notNull(),
    createdAt: createdAt(),
    expiresAt: instant('expires_at').notNull(),
  },
  (t) => [index('console_sessions_account_idx').on(t.accountId)],
);
