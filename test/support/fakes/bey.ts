// A wire fake of Beyond Presence's API as the control plane and agents' Bey plugin call it,
// with `x-api-key`: `GET /v1/avatars/{id}` (`{id, name, status, visibility}`, 404 when unknown)
// and `POST /v1/session` (`{avatar_id, livekit_url, livekit_token}`), after which Bey's
// "avatar" joins the room with the token it was handed and publishes on the agent's behalf.
// It records every session request, and can be told to fail them.
import type { ServiceSession } from '../../../examples/avatar-service/service.ts';
import { serveHostedAvatar } from './hosted-avatar.ts';

export interface BeySessionRequest {
  apiKey: string | null;
  body: { avatar_id?: string; livekit_url?: string; livekit_token?: string };
}

export interface FakeBey {
  /** BEY_API_URL. */
  url: string;
  apiKey: string;
  /** The account's avatars by id, with their training status. */
  avatars: Map<string, 'to-train' | 'training' | 'available' | 'failed'>;
  requests: BeySessionRequest[];
  sessions: ServiceSession[];
  /** Answer session requests with this status (an outage), or null to work. */
  failWith: number | null;
  stop(): Promise<void>;
}

export const BEY_AVATAR_ID = 'b9be11b8-89fb-4227-8f86-4a881393cbdb';
export const BEY_TRAINING_AVATAR_ID = '0c2f7a4e-5b1d-4c55-9d0e-3a7f2e6b9c10';
const BEY_SAMPLE_RATE = 48_000;

export function startFakeBey(apiKey = 'sk-bey-test'): FakeBey {
  const host = serveHostedAvatar(BEY_SAMPLE_RATE, async (request) => {
    const path = new URL(request.url).pathname;
    const key = request.headers.get('x-api-key');
    const avatarPath = /^\/v1\/avatars\/([^/]+)$/.exec(path);
    if (avatarPath && request.method === 'GET') {
      if (key !== apiKey) return Response.json({ detail: 'invalid API key' }, { status: 401 });
      const id = decodeURIComponent(avatarPath[1]!);
      const status = fake.avatars.get(id);
      return status
        ? Response.json({ id, name: 'Ava', status, visibility: 'private' })
        : Response.json({ detail: 'Avatar not found' }, { status: 404 });
    }
    if (path === '/v1/session' && request.method === 'POST') {
      const body = (await request.json()) as BeySessionRequest['body'];
      fake.requests.push({ apiKey: key, body });
      if (fake.failWith !== null) return Response.json({ detail: 'unavailable' }, { status: fake.failWith });
      if (key !== apiKey) return Response.json({ detail: 'invalid API key' }, { status: 401 });
      if (fake.avatars.get(body.avatar_id ?? '') !== 'available')
        return Response.json({ detail: 'avatar not available' }, { status: 404 });
      if (!body.livekit_url || !body.livekit_token)
        return Response.json({ detail: 'livekit_url and livekit_token are required' }, { status: 422 });
      const session = await host.join(body.livekit_url, body.livekit_token);
      return Response.json(
        { id: session.id, avatar_id: body.avatar_id, created_at: new Date().toISOString() },
        { status: 201 },
      );
    }
    return Response.json({ detail: 'Not Found' }, { status: 404 });
  });
  const fake: FakeBey = {
    url: host.origin,
    apiKey,
    avatars: new Map([
      [BEY_AVATAR_ID, 'available'],
      [BEY_TRAINING_AVATAR_ID, 'training'],
    ]),
    requests: [],
    sessions: host.sessions,
    failWith: null,
    stop: host.stop,
  };
  return fake;
}
