// POST /internal/livekit/webhook (docs/api.md#internal): LiveKit's signed webhooks (a
// participant joined or left, a room finished) move sessions along; an unsigned or forged
// one changes nothing.
import { Elysia } from 'elysia';
import { ApiError } from '../http/errors.ts';
import type { LivekitConnection } from '../livekit/connection.ts';
import type { SessionLifecycle } from './lifecycle.ts';

export function livekitWebhookRoutes(deps: { lifecycle: SessionLifecycle; livekit: LivekitConnection }) {
  return new Elysia({ prefix: '/internal', detail: { hide: true } }).post('/livekit/webhook', async ({ request }) => {
    const raw = await request.text();
    let event;
    try {
      event = await deps.livekit.webhooks.receive(raw, request.headers.get('authorization') ?? undefined);
    } catch {
      throw new ApiError(401, 'Invalid webhook signature');
    }
    await deps.lifecycle.onWebhook(event);
    return { ok: true };
  });
}
