// A wire fake of LemonSlice's session API, as agents' LemonSlice plugin calls it:
// `POST <api url>` with `X-API-Key` and `{"transport_type": "livekit", "properties":
// {"livekit_url", "livekit_token"}, "agent_image_url"}`, answering `{"session_id"}`. Its
// "avatar" then joins the room with the token it was handed (the reference avatar service's
// participant, at LemonSlice's 16 kHz) and publishes on the agent's behalf, as LemonSlice's
// servers do. It records each request, and can be told to fail.
import type { ServiceSession } from '../../../examples/avatar-service/service.ts';
import { serveHostedAvatar } from './hosted-avatar.ts';

export interface LemonSliceRequest {
  apiKey: string | null;
  body: {
    transport_type?: string;
    properties?: { livekit_url?: string; livekit_token?: string };
    agent_image_url?: string;
  };
  /** Whether the photo at agent_image_url could be fetched. */
  imageFetched: boolean;
}

export interface FakeLemonSlice {
  /** LEMONSLICE_API_URL. */
  url: string;
  apiKey: string;
  requests: LemonSliceRequest[];
  sessions: ServiceSession[];
  /** Answer every request with this status (an outage), or null to work. */
  failWith: number | null;
  stop(): Promise<void>;
}

const LEMONSLICE_SAMPLE_RATE = 16_000;

export function startFakeLemonSlice(apiKey = 'ls_test_key'): FakeLemonSlice {
  const host = serveHostedAvatar(LEMONSLICE_SAMPLE_RATE, async (request) => {
    if (request.method !== 'POST' || new URL(request.url).pathname !== '/api/liveai/sessions')
      return new Response('not found', { status: 404 });
    const body = (await request.json()) as LemonSliceRequest['body'];
    const image = body.agent_image_url ? await fetch(body.agent_image_url).catch(() => undefined) : undefined;
    const record: LemonSliceRequest = {
      apiKey: request.headers.get('x-api-key'),
      body,
      imageFetched: Boolean(image?.ok),
    };
    fake.requests.push(record);
    if (fake.failWith !== null) return Response.json({ error: 'unavailable' }, { status: fake.failWith });
    if (record.apiKey !== apiKey) return Response.json({ error: 'invalid API key' }, { status: 401 });
    const token = body.properties?.livekit_token;
    const livekitUrl = body.properties?.livekit_url;
    if (!token || !livekitUrl || !record.imageFetched) return Response.json({ error: 'bad request' }, { status: 400 });
    const session = await host.join(livekitUrl, token);
    return Response.json({ session_id: session.id });
  });
  const fake: FakeLemonSlice = {
    url: `${host.origin}/api/liveai/sessions`,
    apiKey,
    requests: [],
    sessions: host.sessions,
    failWith: null,
    stop: host.stop,
  };
  return fake;
}
