// Webhooks as a customer uses them: endpoints added through the API, their deliveries read
// back, and a receiver on loopback that records every POST (raw body and headers) by path and
// answers each path as a test scripts it (e.g. 500 twice, then 200).
import { expect } from 'bun:test';
import { Webhook } from 'standardwebhooks';
import type { TestAccount } from './service.ts';

export const json = (body: unknown) => ({
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json' },
});

export interface Endpoint {
  webhook_id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  secret?: string;
}
export interface Delivery {
  delivery_id: string;
  message_id: string;
  event_type: string;
  status: string;
  attempts: number;
  response_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  attempt_log: { status_code: number | null; error: string | null }[];
}

export async function addWebhook(account: TestAccount, body: Record<string, unknown>): Promise<Endpoint> {
  const answer = await account.call('POST', '/v1/webhooks', json(body));
  expect(answer.status).toBe(201);
  return (await answer.json()) as Endpoint;
}

export async function deliveriesOf(account: TestAccount, webhookId: string): Promise<Delivery[]> {
  const answer = await account.call('GET', `/v1/webhooks/${webhookId}/deliveries`);
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { deliveries: Delivery[] }).deliveries;
}

/** The endpoint's newest delivery once it reads `status`. */
export async function latestDelivery(
  account: TestAccount,
  webhookId: string,
  status: string,
  timeoutMs = 15_000,
): Promise<Delivery> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [newest] = await deliveriesOf(account, webhookId);
    if (newest?.status === status) return newest;
    if (Date.now() > deadline) throw new Error(`the delivery is ${JSON.stringify(newest)}, not ${status}`);
    await Bun.sleep(100);
  }
}

export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** Statuses to answer on a path, in order; the last one repeats. Default 204. */
  readonly script = new Map<string, number[]>();
  readonly #server: ReturnType<typeof Bun.serve>;

  constructor() {
    this.#server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: async (request) => {
        const path = new URL(request.url).pathname;
        this.received.push({
          path,
          headers: Object.fromEntries(request.headers as unknown as Iterable<[string, string]>),
          body: await request.text(),
          at: Date.now(),
        });
        const statuses = this.script.get(path) ?? [204];
        const status = statuses.length > 1 ? statuses.shift()! : statuses[0]!;
        return new Response(status >= 400 ? 'receiver says no' : null, { status });
      },
    });
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.#server.port}${path}`;
  }

  on(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  /** The events a path received, each verified with the endpoint's secret by the standardwebhooks package (throws on a bad signature). */
  verified(path: string, secret: string): { id: string; type: string; data: Record<string, any> }[] {
    const verifier = new Webhook(secret);
    return this.on(path).map((r) => {
      const event = verifier.verify(r.body, r.headers) as { type: string; data: Record<string, any> };
      return { id: r.headers['webhook-id']!, type: event.type, data: event.data };
    });
  }

  async waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value) return value;
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what}; received: ${JSON.stringify(this.received.map((r) => [r.path, r.body.slice(0, 80)]))}`,
        );
      await Bun.sleep(50);
    }
  }

  stop(): void {
    this.#server.stop(true);
  }
}
