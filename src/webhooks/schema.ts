import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';
import { belongsTo, createdAt, instant, updatedAt } from '../db/columns.ts';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** A customer's URL that receives the events it subscribed to, signed with its own secret. */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    url: text('url').notNull(),
    /** Event types (src/webhooks/contract.ts WEBHOOK_EVENTS) this endpoint receives. */
    events: jsonb('events').$type<string[]>().notNull(),
    description: text('description'),
    enabled: boolean('enabled').notNull().default(true),
    /**
     * `whsec_` + base64 of 32 random bytes (Standard Webhooks). Kept as is: signing needs the
     * secret itself, unlike an API key, which is only compared.
     */
    secret: text('secret').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('webhook_endpoints_account_idx').on(t.accountId, t.createdAt)],
);

/** One attempt's outcome, newest last (a delivery keeps its last few). */
export interface DeliveryAttempt {
  at: string;
  /** The receiver's HTTP status; null when no answer came (refused address, timeout, network). */
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/**
 * The outbox: one row per event and endpoint, written in the transaction of the change it
 * reports, sent (and retried) by whichever API process claims it first.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    /** The `webhook-id` header: one per event, the same on every retry and every endpoint. */
    messageId: text('message_id').notNull(),
    endpointId: belongsTo('endpoint_id', () => webhookEndpoints.id).notNull(),
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    eventType: text('event_type').notNull(),
    /** The exact body sent (and signed) on every attempt. */
    payload: text('payload').notNull(),
    status: text('status', { enum: DELIVERY_STATUSES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: instant('next_attempt_at').notNull().defaultNow(),
    /** A process sending it holds it until then; after a crash another takes it over. */
    lockedUntil: instant('locked_until'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    attemptLog: jsonb('attempt_log').$type<DeliveryAttempt[]>().notNull().default([]),
    createdAt: createdAt(),
    deliveredAt: instant('delivered_at'),
  },
  (t) => [
    index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
    uniqueIndex('webhook_deliveries_message_endpoint_uq').on(t.messageId, t.endpointId),
  ],
);
