// Events into the outbox: one delivery row per subscribed endpoint, written with the caller's
// query runner, so an event commits or rolls back with the change it reports (a session's end,
// a charge). Sending is src/webhooks/delivery.ts's job.
import { and, eq } from 'drizzle-orm';
import { isTestAccount } from '../accounts/index.ts';
import { newId } from '../db/ids.ts';
import type { Queryable } from '../db/index.ts';
import { type EventData, TEST_EVENT, type WebhookEventType } from './contract.ts';
import { webhookDeliveries, webhookEndpoints } from './schema.ts';

/** The body every delivery carries (Standard Webhooks' recommended shape). */
export interface EventEnvelope {
  type: WebhookEventType | typeof TEST_EVENT;
  timestamp: string;
  /** A test account's event (docs/api.md#test-mode): its endpoints are the test account's own. */
  test: boolean;
  data: object;
}

const listeners = new Set<() => void>();

/** Called after events were written (possibly not yet committed): a sender in this process looks soon. */
export function onEventsWritten(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function envelope(type: EventEnvelope['type'], accountId: string, data: object): string {
  return JSON.stringify({
    type,
    timestamp: new Date().toISOString(),
    test: isTestAccount(accountId),
    data,
  } satisfies EventEnvelope);
}

/** Writes `type` for every enabled endpoint of the account subscribed to it; returns the message id (none subscribed: undefined). */
export async function writeEvent<T extends WebhookEventType>(
  q: Queryable,
  accountId: string,
  type: T,
  data: EventData[T],
): Promise<string | undefined> {
  const endpoints = await q
    .select({ id: webhookEndpoints.id, events: webhookEndpoints.events })
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.accountId, accountId), eq(webhookEndpoints.enabled, true)));
  const subscribed = endpoints.filter((endpoint) => endpoint.events.includes(type));
  if (subscribed.length === 0) return undefined;
  const messageId = newId('msg');
  const payload = envelope(type, accountId, data);
  await q.insert(webhookDeliveries).values(
    subscribed.map((endpoint) => ({
      id: newId('dlv'),
      messageId,
      endpointId: endpoint.id,
      accountId,
      eventType: type,
      payload,
    })),
  );
  for (const listener of listeners) listener();
  return messageId;
}

/** The test event for one endpoint, whatever it subscribed to. */
export async function writeTestEvent(q: Queryable, endpoint: { id: string; accountId: string }) {
  const [delivery] = await q
    .insert(webhookDeliveries)
    .values({
      id: newId('dlv'),
      messageId: newId('msg'),
      endpointId: endpoint.id,
      accountId: endpoint.accountId,
      eventType: TEST_EVENT,
      payload: envelope(TEST_EVENT, endpoint.accountId, {
        webhook_id: endpoint.id,
        message: 'A test event from Likeness.',
      }),
    })
    .returning();
  for (const listener of listeners) listener();
  return delivery!;
}
