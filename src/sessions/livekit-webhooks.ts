// POST /internal/livekit/webhook (docs/api.md#internal): LiveKit's signed webhooks (a
// participant joined or left, a room finished) move sessions along; an unsigned or forged
// one changes nothing. The signature is a token in the Authorization header that carries the
// body's SHA-256: the token is checked before the body is read, the hash after.
import { Elysia } from 'elysia';
import { TokenVerifier } from 'livekit-server-sdk';
import type { InternalDoor } from '../auth/index.ts';
import { ApiError } from '../http/errors.ts';
import type { LivekitConnection } from '../livekit/index.ts';
import type { SessionLifecycle } from './lifecycle.ts';

export const LIVEKIT_WEBHOOK_PATH = '/internal/livekit/webhook';

/** LiveKit, checked before its webhooks are read (src/auth/internal-doors.ts). Its events are a few kilobytes. */
export function livekitWebhookDoor(livekit: { apiKey: string; apiSecret: string }): InternalDoor {
  const verifier = new TokenVerifier(livekit.apiKey, livekit.apiSecret);
  return {
    matches: (path) => path === LIVEKIT_WEBHOOK_PATH,
    maxBodyBytes: 1024 * 1024,
    async admit(request) {
      // LiveKit sends the token bare; `Bearer` is taken too.
      const token = (request.headers.get('authorization') ?? '').replace(/^Bearer /, '');
      if (
        !token ||
        !(await verifier.verify(token).then(
          () => true,
          () => false,
        ))
      )
        throw new ApiError(401, 'Invalid webhook signature');
    },
  };
}

export function livekitWebhookRoutes(deps: { lifecycle: SessionLifecycle; livekit: LivekitConnection }) {
  return new Elysia({ detail: { hide: true } }).post(LIVEKIT_WEBHOOK_PATH, async ({ request }) => {
    const raw = await request.text();
    let event: Awaited<ReturnType<LivekitConnection['webhooks']['receive']>>;
    try {
      event = await deps.livekit.webhooks.receive(raw, request.headers.get('authorization') ?? undefined);
    } catch {
      throw new ApiError(401, 'Invalid webhook signature');
    }
    await deps.lifecycle.onWebhook(event);
    return { ok: true };
  });
}
