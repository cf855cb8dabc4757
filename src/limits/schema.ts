// What the limits count beyond rows that exist anyway (sessions, identities): attempts per
// scope and key over a sliding window (failed sign-ins, sign-ups, identity creates), so that
// every control-plane replica on one database counts the same attempts and a restart resets
// nothing. Keys are hashed: the table holds no email address or client address. Rows older
// than their window are deleted as new ones come.
import { bigserial, index, pgTable, text } from 'drizzle-orm/pg-core';
import { instant } from '../db/columns.ts';

export const limitAttempts = pgTable(
  'limit_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    scope: text('scope').notNull(),
    keyHash: text('key_hash').notNull(),
    at: instant('at').notNull(),
  },
  (t) => [index('limit_attempts_key_idx').on(t.scope, t.keyHash, t.at)],
);
