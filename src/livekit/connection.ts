// The control plane's handle on a LiveKit server: rooms, agent dispatches, webhooks and
// client tokens, whether the server is the local one or an external cluster.
import { AccessToken, AgentDispatchClient, RoomServiceClient, TrackSource, WebhookReceiver } from 'livekit-server-sdk';

export interface LivekitCredentials {
  /** Server address as the service reaches it (ws(s) or http(s)). */
  url: string;
  /** Address handed to clients as `rtc_url`. */
  publicUrl: string;
  apiKey: string;
  apiSecret: string;
}

export interface LivekitConnection extends LivekitCredentials {
  rooms: RoomServiceClient;
  dispatches: AgentDispatchClient;
  webhooks: WebhookReceiver;
  /** A room token for one participant of one room. */
  mintToken(input: { room: string; identity: string; name?: string; ttlSeconds: number }): Promise<string>;
}

/** API calls fail after this long, so an unreachable server becomes a 500/502 quickly. */
const REQUEST_TIMEOUT_SECONDS = 5;

export function httpUrlOf(url: string): string {
  return url.replace(/^ws(s?):\/\//, 'http$1://');
}

export function connectLivekit(credentials: LivekitCredentials): LivekitConnection {
  const apiUrl = httpUrlOf(credentials.url);
  const options = { requestTimeout: REQUEST_TIMEOUT_SECONDS, failover: false };
  return {
    ...credentials,
    rooms: new RoomServiceClient(apiUrl, credentials.apiKey, credentials.apiSecret, options),
    dispatches: new AgentDispatchClient(apiUrl, credentials.apiKey, credentials.apiSecret, options),
    webhooks: new WebhookReceiver(credentials.apiKey, credentials.apiSecret),
    async mintToken({ room, identity, name, ttlSeconds }) {
      const token = new AccessToken(credentials.apiKey, credentials.apiSecret, { identity, name, ttl: ttlSeconds });
      // A visitor speaks and may show their camera; nothing else (no screen share into the agent's room).
      token.addGrant({
        room,
        roomJoin: true,
        canPublish: true,
        canPublishSources: [TrackSource.MICROPHONE, TrackSource.CAMERA],
        canSubscribe: true,
        canPublishData: true,
      });
      return token.toJwt();
    },
  };
}

/** True when LiveKit says the room does not exist (as opposed to not answering). */
export function isNotFound(error: unknown): boolean {
  const e = error as { status?: number; code?: string } | undefined;
  return e?.status === 404 || e?.code === 'not_found';
}
