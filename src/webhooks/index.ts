// Customer webhooks (docs/api.md#webhooks). Here, /v1/webhooks: a customer's endpoints, a test
// event, and each endpoint's recent deliveries; for API keys and, as twins, the console. Beside
// it: events written into an outbox with the change they report (outbox.ts), and the sender
// every API process runs (delivery.ts), which refuses private destinations (destinations.ts)
// and connects to the address it checked (pinned-fetch.ts, for any call to a customer's URL).
import { count, desc, eq } from 'drizzle-orm';
import { t } from 'elysia';
import { isTestAccount } from '../accounts/index.ts';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import type { WebhookSettings } from '../config.ts';
import { newId } from '../db/ids.ts';
import type { Database } from '../db/index.ts';
import { isOwned } from '../db/owned.ts';
import { errorResponses, invalid, notFound } from '../http/errors.ts';
import { ownedItem } from '../http/owned-item.ts';
import { sentFields } from '../http/sent-fields.ts';
import {
  CreatedWebhookResponse,
  CreateWebhookRequest,
  DeliveriesQuery,
  DeliveryListResponse,
  DeliveryResponse,
  UpdateWebhookRequest,
  WebhookListResponse,
  WebhookParams,
  WebhookResponse,
} from './contract.ts';
import { checkDestination, DestinationRefused, type Resolver, systemResolver } from './destinations.ts';
import { writeTestEvent } from './outbox.ts';
import { webhookDeliveries, webhookEndpoints } from './schema.ts';

export { WEBHOOK_EVENTS, type WebhookEventType } from './contract.ts';
export { WebhookSender } from './delivery.ts';
export { checkDestination, DestinationRefused, type Resolver, systemResolver } from './destinations.ts';
export { WEBHOOK_EXAMPLES } from './examples.ts';
export { writeEvent } from './outbox.ts';
export { type PinnedAnswer, type PinnedRequest, pinnedFetch } from './pinned-fetch.ts';

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export interface WebhookRouteDeps {
  db: Database;
  settings: WebhookSettings;
  resolve?: Resolver;
}

function presentEndpoint(row: EndpointRow) {
  return {
    webhook_id: row.id,
    url: row.url,
    events: row.events as (typeof WebhookResponse.static)['events'],
    description: row.description,
    enabled: row.enabled,
    test: isTestAccount(row.accountId),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function presentDelivery(row: DeliveryRow) {
  return {
    delivery_id: row.id,
    message_id: row.messageId,
    event_type: row.eventType,
    status: row.status,
    attempts: row.attempts,
    response_status: row.lastStatusCode,
    last_error: row.lastError,
    next_attempt_at: row.status === 'pending' ? row.nextAttemptAt.toISOString() : null,
    created_at: row.createdAt.toISOString(),
    delivered_at: row.deliveredAt?.toISOString() ?? null,
    attempt_log: row.attemptLog,
  };
}

/** `whsec_` + base64 of 32 random bytes: Standard Webhooks' secret format. */
function newSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;
}

const errors = errorResponses(401, 404, 422);

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route table: Elysia infers each route's types along one chain, so a feature's routes stay one expression
export function webhookRoutes<const Prefix extends string>(deps: WebhookRouteDeps, audience: Audience<Prefix>) {
  const { db, settings } = deps;
  const checkUrl = async (url: string) => {
    try {
      await checkDestination(url, { allowPrivate: settings.allowPrivate, resolve: deps.resolve ?? systemResolver });
    } catch (error) {
      if (error instanceof DestinationRefused)
        throw invalid(['body', 'url'], `url: ${error.message}`, 'url_not_allowed');
      throw error;
    }
  };
  const endpoint = ownedItem(db, webhookEndpoints, 'webhook_id', 'Webhook', presentEndpoint);
  const own = endpoint.find;
  return authenticatedRoutes(db, audience, '/webhooks', 'Webhooks')
    .post(
      '',
      async ({ caller, body, set }) => {
        await checkUrl(body.url);
        const row = await db.transaction(async (tx) => {
          const [{ endpoints }] = (await tx
            .select({ endpoints: count() })
            .from(webhookEndpoints)
            .where(eq(webhookEndpoints.accountId, caller.accountId))) as [{ endpoints: number }];
          if (endpoints >= settings.maxEndpointsPerAccount) {
            throw invalid(
              ['body'],
              `An account can have at most ${settings.maxEndpointsPerAccount} webhooks; delete one first`,
              'too_many_webhooks',
            );
          }
          const [created] = await tx
            .insert(webhookEndpoints)
            .values({
              id: newId('whk'),
              accountId: caller.accountId,
              url: body.url,
              events: body.events,
              description: body.description ?? null,
              enabled: body.enabled ?? true,
              secret: newSecret(),
            })
            .returning();
          return created!;
        });
        set.status = 201;
        return { ...presentEndpoint(row), secret: row.secret };
      },
      {
        body: CreateWebhookRequest,
        parse: 'json',
        response: { 201: CreatedWebhookResponse, ...errors },
        detail: {
          operationId: 'createWebhook',
          summary: 'Add a webhook endpoint; its signing secret is in this answer only',
          description:
            'Events are POSTed as JSON `{type, timestamp, data}` with Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`), retried for about a day until a 2xx comes back.',
        },
      },
    )
    .get(
      '',
      async ({ caller }) => {
        const rows = await db
          .select()
          .from(webhookEndpoints)
          .where(eq(webhookEndpoints.accountId, caller.accountId))
          .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id));
        return { webhooks: rows.map(presentEndpoint) };
      },
      {
        response: { 200: WebhookListResponse, ...errorResponses(401) },
        detail: { operationId: 'listWebhooks', summary: "List the caller's webhook endpoints" },
      },
    )
    .get('/:webhook_id', endpoint.read, {
      params: WebhookParams,
      response: { 200: WebhookResponse, ...errorResponses(401, 404) },
      detail: { operationId: 'getWebhook', summary: 'Read one webhook endpoint' },
    })
    .patch(
      '/:webhook_id',
      async ({ caller, params, body }) => {
        await own(caller.accountId, params.webhook_id);
        if (body.url !== undefined) await checkUrl(body.url);
        const [row] = await db
          .update(webhookEndpoints)
          .set(sentFields(body, { url: 'url', events: 'events', description: 'description', enabled: 'enabled' }))
          .where(isOwned(webhookEndpoints, caller.accountId, params.webhook_id))
          .returning();
        if (!row) throw notFound('Webhook');
        return presentEndpoint(row);
      },
      {
        params: WebhookParams,
        body: UpdateWebhookRequest,
        parse: 'json',
        response: { 200: WebhookResponse, ...errors },
        detail: {
          operationId: 'updateWebhook',
          summary: 'Change a webhook endpoint: URL, events, description, enabled',
        },
      },
    )
    .delete('/:webhook_id', endpoint.remove(), {
      params: WebhookParams,
      response: { 204: t.Void(), ...errorResponses(401, 404) },
      detail: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint; deliveries not yet made are dropped',
      },
    })
    .post(
      '/:webhook_id/test',
      async ({ caller, params, set }) => {
        const endpoint = await own(caller.accountId, params.webhook_id);
        set.status = 202;
        return presentDelivery(await writeTestEvent(db, endpoint));
      },
      {
        params: WebhookParams,
        response: { 202: DeliveryResponse, ...errorResponses(401, 404) },
        detail: {
          operationId: 'testWebhook',
          summary: 'Send a `webhook.test` event to this endpoint now',
          description:
            "Answers at once with the delivery; its outcome shows in the endpoint's deliveries moments later.",
        },
      },
    )
    .get(
      '/:webhook_id/deliveries',
      async ({ caller, params, query }) => {
        await own(caller.accountId, params.webhook_id);
        const rows = await db
          .select()
          .from(webhookDeliveries)
          .where(eq(webhookDeliveries.endpointId, params.webhook_id))
          .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
          .limit(query.limit ?? 50);
        return { deliveries: rows.map(presentDelivery) };
      },
      {
        params: WebhookParams,
        query: DeliveriesQuery,
        response: { 200: DeliveryListResponse, ...errors },
        detail: {
          operationId: 'listWebhookDeliveries',
          summary: "An endpoint's recent deliveries, newest first, with each attempt's status code",
        },
      },
    );
}
