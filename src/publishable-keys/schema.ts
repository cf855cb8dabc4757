import { boolean, index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';
import { belongsTo, createdAt, instant, updatedAt } from '../db/columns.ts';

/** A publishable key's own limits (docs/api.md#publishable-keys); each ≥ 1: a published key is always bounded. */
export interface PublishableKeyLimits {
  /** Sessions started with the key in the last minute. */
  sessions_per_minute: number;
  /** Its sessions running at once. */
  concurrent_sessions: number;
  /** The same two per visitor address (the client address the service sees, src/http/caller-address.ts). */
  visitor_sessions_per_minute: number;
  visitor_concurrent_sessions: number;
}

/**
 * A key a website may publish (`lk_pub_…`): it starts sessions of some identities from some
 * origins, within its own limits, and reads nothing. Being public by design, the key is stored
 * as it is, so the console can show its snippet at any time.
 */
export const publishableKeys = pgTable(
  'publishable_keys',
  {
    id: text('id').primaryKey(),
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    name: text('name'),
    key: text('key').notNull().unique(),
    /** Exact origins (`https://shop.example`) whose pages may start sessions with it. */
    allowedOrigins: jsonb('allowed_origins').$type<string[]>().notNull(),
    /** The identities it may start; a deleted one stays listed and is refused as not found. */
    identityIds: jsonb('identity_ids').$type<string[]>().notNull(),
    limits: jsonb('limits').$type<PublishableKeyLimits>().notNull(),
    /** Whether the embed's sessions are recorded; null: as each identity says (its `record_sessions`). */
    recordSessions: boolean('record_sessions'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    lastUsedAt: instant('last_used_at'),
    revokedAt: instant('revoked_at'),
  },
  (t) => [index('publishable_keys_account_idx').on(t.accountId, t.createdAt, t.id)],
);
