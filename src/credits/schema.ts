import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';
import { belongsTo, createdAt } from '../db/columns.ts';

export const LEDGER_KINDS = [
  'grant',
  'onboarding',
  'session_minute',
  /** A recorded session's minute (docs/api.md#recordings), beside its `session_minute`. */
  'recorded_minute',
  'session_hold',
  'session_release',
  'adjustment',
] as const;

/** Append-only: every change of a balance is one row; `reference` makes each charge idempotent. */
export const creditLedger = pgTable(
  'credit_ledger',
  {
    id: text('id').primaryKey(),
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    /** Positive for grants, negative for charges. */
    amount: integer('amount').notNull(),
    kind: text('kind', { enum: LEDGER_KINDS }).notNull(),
    /** What the entry is for, e.g. `identity:idn_…` or `session:room:minute:3`; unique per kind. */
    reference: text('reference').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('credit_ledger_kind_reference_uq').on(t.kind, t.reference),
    index('credit_ledger_account_idx').on(t.accountId, t.createdAt),
  ],
);
