import { index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';
import { TOOL_TYPES } from '../contract/agent-tools.ts';
import { belongsTo, createdAt, updatedAt } from '../db/columns.ts';

/** A tool an account's agents may call (docs/api.md#tools). */
export const tools = pgTable(
  'tools',
  {
    id: text('id').primaryKey(),
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    /** What the model calls; unique in the account. */
    name: text('name').notNull(),
    description: text('description').notNull(),
    type: text('type', { enum: TOOL_TYPES }).notNull(),
    /** A JSON Schema of type object, checked on save. */
    parameters: jsonb('parameters').$type<Record<string, unknown>>().notNull(),
    /** A webhook tool's receiver; null for the others. */
    url: text('url'),
    timeoutMs: integer('timeout_ms').notNull(),
    /** A webhook tool's signing secret (`whsec_…`), kept as is: signing needs it. Null for the others. */
    secret: text('secret'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('tools_account_name_idx').on(t.accountId, t.name),
    index('tools_account_created_idx').on(t.accountId, t.createdAt, t.id),
  ],
);
