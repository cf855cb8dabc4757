import { sql } from 'drizzle-orm';
import { type AnyPgColumn, check, index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import type { AccountLimits } from '../config.ts';
import { belongsTo, createdAt, instant } from '../db/columns.ts';

/** Ten avatar minutes at the default rate: time to top up before sessions end for want of credits. */
export const DEFAULT_LOW_BALANCE_THRESHOLD = 100;

export const accounts = pgTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    /** null for a test account: it is reached through its live account's test keys, never signed in to. */
    email: text('email').unique(),
    /**
     * Set on a test account (docs/api.md#test-mode): the live account whose test keys (`lk_test_…`)
     * reach it. Its id is the live one's with `acc_test_` (src/accounts/test-mode.ts), so any code
     * holding an account id knows its mode without a query.
     */
    testOf: text('test_of')
      .unique()
      .references((): AnyPgColumn => accounts.id, { onDelete: 'cascade' }),
    /** Cached sum of the account's ledger; guarded updates keep it from going negative. */
    balance: integer('balance').notNull().default(0),
    /** This account's session length limit; null: the service default. */
    maxSessionSeconds: integer('max_session_seconds'),
    /** This account's own limits (src/limits), each overriding the service default; null: the defaults. */
    limits: jsonb('limits').$type<Partial<AccountLimits>>(),
    /** A charge that takes the balance below this sends `credits.low` (docs/api.md#webhooks); 0: never. */
    lowBalanceThreshold: integer('low_balance_threshold').notNull().default(DEFAULT_LOW_BALANCE_THRESHOLD),
    createdAt: createdAt(),
  },
  (t) => [check('accounts_balance_not_negative', sql`${t.balance} >= 0`)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    name: text('name'),
    /** SHA-256 of the whole key; the key itself is shown once and never stored. */
    keyHash: text('key_hash').notNull().unique(),
    /** First characters of the key, so an operator can tell keys apart. */
    keyPrefix: text('key_prefix').notNull(),
    createdAt: createdAt(),
    lastUsedAt: instant('last_used_at'),
    revokedAt: instant('revoked_at'),
  },
  (t) => [index('api_keys_account_idx').on(t.accountId)],
);
