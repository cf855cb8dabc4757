// An account's webhook pointed at a receiver on loopback: how the suites of the events
// (a session's end, its summary and outcome, recordings, visitors) begin.
import type { TestAccount } from './service.ts';
import { addWebhook, WebhookReceiver } from './webhooks.ts';

/** What a service needs to deliver to a loopback receiver promptly: private addresses allowed, a 200 ms poll. */
export const LOOPBACK_WEBHOOKS_ENV = { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_POLL_MS: '200' };

/** A receiver of `events` at its /hooks, and the secret their deliveries are signed with. */
export async function subscribedReceiver(
  account: TestAccount,
  events: string[],
): Promise<{ receiver: WebhookReceiver; secret: string }> {
  const receiver = new WebhookReceiver();
  try {
    const { secret } = await addWebhook(account, { url: receiver.url('/hooks'), events });
    return { receiver, secret: secret! };
  } catch (error) {
    receiver.stop();
    throw error;
  }
}
