// Customer webhooks (docs/api.md#webhooks): endpoints (routes.ts), events written into an
// outbox with the change they report (outbox.ts), and the sender every API process runs
// (delivery.ts), which refuses private destinations (destinations.ts).
export { webhookRoutes } from './routes.ts';
export { WebhookSender } from './delivery.ts';
export { writeEvent } from './outbox.ts';
export { WEBHOOK_EVENTS, type WebhookEvent } from './contract.ts';
