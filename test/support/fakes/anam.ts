// A wire fake of Anam's API as the control plane and agents' Anam plugin call it, each call
// with `Authorization: Bearer <key>`:
// - `GET /v1/avatars/{id}` (404 when unknown), `POST /v1/avatars` (multipart `displayName`,
//   `imageFile`: a one-shot avatar from an image), `DELETE /v1/avatars/{id}`;
// - `POST /v1/auth/session-token` (`{personaConfig: {type: "ephemeral", name, avatarId, llmId},
//   environment: {livekitUrl, livekitToken}, sessionOptions}`) answering `{sessionToken}`, then
//   `POST /v1/engine/session` with `Bearer <sessionToken>`: Anam's "avatar" joins the room with
//   the LiveKit token it was handed and publishes on the agent's behalf.
// It records every call, and can be told to fail the session calls.
import type { ServiceSession } from '../../../examples/avatar-service/service.ts';
import { serveHostedAvatar } from './hosted-avatar.ts';

export interface AnamCall {
  method: string;
  path: string;
  authorization: string | null;
  body: Record<string, unknown> | null;
}

export interface FakeAnam {
  /** ANAM_API_URL. */
  url: string;
  apiKey: string;
  calls: AnamCall[];
  /** Avatars by id, with the PNG bytes of one-shot avatars made here. */
  avatars: Map<string, { displayName: string; image: Uint8Array | null }>;
  sessions: ServiceSession[];
  /** Answer the session calls with this status (an outage), or null to work. */
  failSessionsWith: number | null;
  /** Answer avatar creation with this status, or null to work. */
  failCreateWith: number | null;
  stop(): Promise<void>;
}

/** A stock avatar every Anam account sees. */
export const ANAM_STOCK_AVATAR_ID = '30fa96d0-26c4-4e55-94a0-517025942e18';
const ANAM_SAMPLE_RATE = 48_000;

export function startFakeAnam(apiKey = 'anam_test_key'): FakeAnam {
  const pending = new Map<string, { livekitUrl: string; livekitToken: string }>();
  let made = 0;
  const avatarJson = (id: string) => ({
    id,
    displayName: fake.avatars.get(id)!.displayName,
    variantName: 'default',
    imageUrl: null,
    createdAt: new Date().toISOString(),
  });
  const host = serveHostedAvatar(ANAM_SAMPLE_RATE, async (request) => {
    const path = new URL(request.url).pathname;
    const authorization = request.headers.get('authorization');
    const multipart = request.headers.get('content-type')?.startsWith('multipart/form-data');
    const form = multipart ? await request.formData() : null;
    const json =
      !multipart && request.method === 'POST'
        ? ((await request.json().catch(() => null)) as Record<string, unknown> | null)
        : null;
    fake.calls.push({
      method: request.method,
      path,
      authorization,
      body:
        json ??
        (form
          ? Object.fromEntries([...form.keys()].map((k) => [k, typeof form.get(k) === 'string' ? form.get(k) : 'file']))
          : null),
    });
    const avatarPath = /^\/v1\/avatars\/([^/]+)$/.exec(path);

    if (path === '/v1/engine/session' && request.method === 'POST') {
      if (fake.failSessionsWith !== null)
        return Response.json({ message: 'unavailable' }, { status: fake.failSessionsWith });
      const environment = pending.get(authorization?.replace(/^Bearer /, '') ?? '');
      if (!environment) return Response.json({ message: 'invalid session token' }, { status: 401 });
      const session = await host.join(environment.livekitUrl, environment.livekitToken);
      return Response.json({ sessionId: session.id });
    }
    if (authorization !== `Bearer ${apiKey}`) return Response.json({ message: 'invalid API key' }, { status: 401 });
    if (path === '/v1/auth/session-token' && request.method === 'POST') {
      if (fake.failSessionsWith !== null)
        return Response.json({ message: 'unavailable' }, { status: fake.failSessionsWith });
      const persona = (json?.personaConfig ?? {}) as { avatarId?: string };
      const environment = (json?.environment ?? {}) as { livekitUrl?: string; livekitToken?: string };
      if (!persona.avatarId || !fake.avatars.has(persona.avatarId))
        return Response.json({ message: 'avatar not found' }, { status: 404 });
      if (!environment.livekitUrl || !environment.livekitToken)
        return Response.json({ message: 'environment required' }, { status: 400 });
      const sessionToken = `st_${crypto.randomUUID()}`;
      pending.set(sessionToken, { livekitUrl: environment.livekitUrl, livekitToken: environment.livekitToken });
      return Response.json({ sessionToken });
    }
    if (path === '/v1/avatars' && request.method === 'POST') {
      if (fake.failCreateWith !== null)
        return Response.json({ message: 'unavailable' }, { status: fake.failCreateWith });
      const displayName = form?.get('displayName');
      const image = form?.get('imageFile');
      if (
        typeof displayName !== 'string' ||
        displayName.length < 3 ||
        displayName.length > 50 ||
        !(image instanceof Blob)
      ) {
        return Response.json({ message: 'displayName (3-50 characters) and imageFile are required' }, { status: 400 });
      }
      const id = `anam-oneshot-${++made}`;
      fake.avatars.set(id, { displayName, image: new Uint8Array(await image.arrayBuffer()) });
      return Response.json(avatarJson(id), { status: 201 });
    }
    if (avatarPath && request.method === 'GET') {
      const id = decodeURIComponent(avatarPath[1]!);
      return fake.avatars.has(id)
        ? Response.json(avatarJson(id))
        : Response.json({ message: 'Avatar not found' }, { status: 404 });
    }
    if (avatarPath && request.method === 'DELETE') {
      const id = decodeURIComponent(avatarPath[1]!);
      return fake.avatars.delete(id)
        ? Response.json({ message: 'deleted' })
        : Response.json({ message: 'Avatar not found' }, { status: 404 });
    }
    return Response.json({ message: 'not found' }, { status: 404 });
  });
  const fake: FakeAnam = {
    url: host.origin,
    apiKey,
    calls: [],
    avatars: new Map([[ANAM_STOCK_AVATAR_ID, { displayName: 'Cara', image: null }]]),
    sessions: host.sessions,
    failSessionsWith: null,
    failCreateWith: null,
    stop: host.stop,
  };
  return fake;
}
