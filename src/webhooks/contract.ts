// The HTTP contract of /v1/webhooks (docs/api.md#webhooks): one schema per request and
// response, validated at the edge and shown in /openapi.json, and the events' names.
import { t } from 'elysia';
import { TestFlag } from '../accounts/index.ts';
import { Timestamp } from '../contract/index.ts';
import { WEBHOOK_EVENTS } from '../contract/webhook-events.ts';
import { oneOf } from '../http/enum-schema.ts';
import { DELIVERY_STATUSES } from './schema.ts';

export { TEST_EVENT, WEBHOOK_EVENTS, type WebhookEventType } from '../contract/webhook-events.ts';

const Url = t.String({
  maxLength: 2000,
  description:
    'An http(s) URL. Its host must resolve to public addresses (unless the operator set WEBHOOKS_ALLOW_PRIVATE); checked again at every delivery.',
  examples: ['https://example.com/likeness/events'],
});
const Events = t.Array(oneOf(WEBHOOK_EVENTS), {
  minItems: 1,
  uniqueItems: true,
  description: 'The events this endpoint receives.',
});
const Description = t.String({ maxLength: 500 });

export const CreateWebhookRequest = t.Object({
  url: Url,
  events: Events,
  description: t.Optional(Description),
  enabled: t.Optional(t.Boolean({ description: 'Default true; a disabled endpoint receives nothing.' })),
});

export const UpdateWebhookRequest = t.Object(
  {
    url: t.Optional(Url),
    events: t.Optional(Events),
    description: t.Optional(t.Union([Description, t.Null()])),
    enabled: t.Optional(t.Boolean()),
  },
  { minProperties: 1 },
);

export const WebhookParams = t.Object({ webhook_id: t.String() });

export const WebhookResponse = t.Object({
  webhook_id: t.String(),
  url: t.String(),
  events: t.Array(oneOf(WEBHOOK_EVENTS)),
  description: t.Union([t.String(), t.Null()]),
  enabled: t.Boolean(),
  test: TestFlag,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CreatedWebhookResponse = t.Composite([
  WebhookResponse,
  t.Object({
    secret: t.String({
      description:
        'The signing secret (`whsec_…`, Standard Webhooks). Shown only in this answer: keep it to verify `webhook-signature`.',
    }),
  }),
]);

export const WebhookListResponse = t.Object({ webhooks: t.Array(WebhookResponse, { description: 'Newest first.' }) });

export const DeliveryAttemptResponse = t.Object({
  at: Timestamp,
  status_code: t.Union([t.Integer(), t.Null()], {
    description: "The receiver's HTTP status; null when none came (timeout, refused address, network).",
  }),
  error: t.Union([t.String(), t.Null()]),
  duration_ms: t.Integer(),
});

export const DeliveryResponse = t.Object({
  delivery_id: t.String(),
  message_id: t.String({ description: 'The `webhook-id` header: the same on every retry; deduplicate on it.' }),
  event_type: t.String(),
  status: oneOf(
    DELIVERY_STATUSES,
    '`pending`: not yet delivered (a retry is scheduled); `delivered`: a 2xx came back; `failed`: every retry failed.',
  ),
  attempts: t.Integer(),
  response_status: t.Union([t.Integer(), t.Null()], { description: "The last attempt's HTTP status." }),
  last_error: t.Union([t.String(), t.Null()]),
  next_attempt_at: t.Union([Timestamp, t.Null()], {
    description: 'When a pending delivery is tried again.',
  }),
  created_at: Timestamp,
  delivered_at: t.Union([Timestamp, t.Null()]),
  attempt_log: t.Array(DeliveryAttemptResponse, { description: 'The last attempts, oldest first.' }),
});

export const DeliveriesQuery = t.Object({
  limit: t.Optional(
    t.Integer({ minimum: 1, maximum: 100, description: 'Deliveries to list, newest first; default 50.' }),
  ),
});

export const DeliveryListResponse = t.Object({ deliveries: t.Array(DeliveryResponse) });

/** Each event's `data` (docs/api.md#webhook-events). */
export interface EventData {
  'session.started': {
    session_id: string;
    identity_id: string | null;
    avatar_enabled: boolean;
    language: string;
    /** Started by a website with this publishable key; null: by a secret key. */
    publishable_key_id: string | null;
    created_at: string;
  };
  'session.ended': {
    session_id: string;
    identity_id: string | null;
    reason: string;
    billed_minutes: number;
    credits_charged: number;
    visitor_seconds: number;
    streamed_seconds: number;
    duration_seconds: number;
    created_at: string;
    ended_at: string;
  };
  /** The conversation's summary was written (docs/api.md#sessions-summary); one that failed sends none. */
  'session.summary_ready': { session_id: string; identity_id: string | null; summary: string; language: string };
  /** The conversation's outcome was written (docs/api.md#outcomes): each field its value or null. One that failed sends none. */
  'session.outcome_ready': { session_id: string; identity_id: string | null; outcome: Record<string, unknown> };
  /** A session's recording (docs/api.md#recordings) was stored: its file can be fetched from now on. */
  'recording.ready': {
    session_id: string;
    identity_id: string | null;
    duration_seconds: number;
    size_bytes: number;
    /** `service` (fetch it with GET /v1/sessions/{id}/recording) or `customer` (the account's bucket, at `object_key`). */
    store: string;
    object_key: string | null;
  };
  /** A session's recording could not be made; `reason` says why. */
  'recording.failed': { session_id: string; identity_id: string | null; reason: string };
  'identity.ready': { identity_id: string; name: string; pipeline_id: string; retrained: boolean };
  /** A retrain (PATCH with uploads) failed; the identity keeps its previous training. A failed create answers the call itself. */
  'identity.training_failed': { identity_id: string; name: string; detail: string };
  'credits.low': { balance: number; threshold: number; charged: number; kind: string; reference: string };
  /**
   * A session's job changed what is remembered of its visitor (docs/api.md#visitors): the scope's
   * facts now (`identity_id` null: the account's shared memory). A PATCH, your own change, sends none.
   */
  'visitor.memory_updated': { visitor_id: string; session_id: string; identity_id: string | null; facts: string[] };
  /** A document (docs/api.md#documents) was processed and is searched from now on. */
  'document.ready': { document_id: string; name: string; chunks: number };
  /** A document could not be processed; `detail` says what to change. */
  'document.failed': { document_id: string; name: string; detail: string };
}
