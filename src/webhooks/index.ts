// Customer webhooks (docs/api.md#webhooks): endpoints (routes.ts), events written into an
// outbox with the change they report (outbox.ts), and the sender every API process runs
// (delivery.ts), which refuses private destinations (destinations.ts) and connects to the
// address it checked (pinned-fetch.ts, for any call to a customer's URL).

export { WEBHOOK_EVENTS, type WebhookEvent } from './contract.ts';
export { WebhookSender } from './delivery.ts';
export { writeEvent } from './outbox.ts';
export { type PinnedAnswer, type PinnedRequest, pinnedFetch } from './pinned-fetch.ts';
export { webhookRoutes } from './routes.ts';
