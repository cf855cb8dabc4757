import { index, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';
import { belongsTo, createdAt, instant, updatedAt } from '../db/columns.ts';

/** One thing remembered of a visitor (docs/api.md#visitors). */
export interface StoredFact {
  text: string;
  /** The identity whose sessions remember it; null: the account's shared memory (`memory_scope: account`). */
  identity_id: string | null;
  learned_at: string;
  /** The session it was learned in; null: written with PATCH. */
  session_id: string | null;
}

/**
 * A person an account's sessions were started for (`visitor_id`, the customer's own id), and
 * what is remembered of them. Made by the first session that names them; gone with DELETE
 * (right to erasure) or after VISITOR_MEMORY_DAYS without a session (src/visitors/memory.ts).
 * `id` is the customer's id: unique per account only.
 */
export const visitors = pgTable(
  'visitors',
  {
    id: text('id').notNull(),
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    /** Oldest first; at most MEMORY_MAX_FACTS per identity and for the account. */
    facts: jsonb('facts').$type<StoredFact[]>().notNull().default([]),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    lastSessionAt: instant('last_session_at'),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    index('visitors_account_created_idx').on(t.accountId, t.createdAt, t.id),
    index('visitors_last_session_idx').on(t.lastSessionAt),
  ],
);
