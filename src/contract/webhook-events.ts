// The events a customer's webhook endpoint can subscribe to (docs/api.md#webhook-events): one
// list for the API's validation (src/webhooks) and the console's form.
export const WEBHOOK_EVENTS = [
  'session.started',
  'session.ended',
  'session.summary_ready',
  'session.outcome_ready',
  'recording.ready',
  'recording.failed',
  'identity.ready',
  'identity.training_failed',
  'document.ready',
  'document.failed',
  'credits.low',
  'visitor.memory_updated',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];
/** What POST /v1/webhooks/{id}/test sends, whatever the endpoint subscribed to. */
export const TEST_EVENT = 'webhook.test';
