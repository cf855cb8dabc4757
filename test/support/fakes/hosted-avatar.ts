// What every hosted avatar's servers do once asked to join (the wire fakes of LemonSlice, Anam
// and Beyond Presence share it): join the room with the LiveKit token the plugin handed over,
// as the participant and on behalf of whom its claims say, and publish video and audio there
// (the reference avatar service's participant does the work).
import { joinAsAvatar, type ServiceSession } from '../../../examples/avatar-service/service.ts';

export type JoinedAvatar = ServiceSession & { close(): Promise<void> };

export async function joinWithHandedToken(
  livekitUrl: string,
  token: string,
  sampleRate: number,
): Promise<JoinedAvatar> {
  // Who it is and for whom it publishes, as LiveKit will see it: from the token's claims.
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
    sub: string;
    attributes?: Record<string, string>;
    video?: { room?: string };
  };
  return joinAsAvatar({
    livekitUrl,
    roomName: claims.video?.room ?? '',
    token,
    avatarParticipantIdentity: claims.sub,
    agentParticipantIdentity: claims.attributes?.['lk.publish_on_behalf'] ?? '',
    identity: null,
    shape: 'portrait',
    sampleRate,
  });
}

/** A hosted avatar's API server: its handler joins rooms with `join`, and `stop` closes them. */
export interface HostedAvatarServer {
  /** The server's origin, `http://127.0.0.1:<port>`. */
  origin: string;
  sessions: JoinedAvatar[];
  join(livekitUrl: string, token: string): Promise<JoinedAvatar>;
  stop(): Promise<void>;
}

export function serveHostedAvatar(
  sampleRate: number,
  handle: (request: Request) => Response | Promise<Response>,
): HostedAvatarServer {
  const sessions: JoinedAvatar[] = [];
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handle });
  return {
    origin: `http://127.0.0.1:${server.port}`,
    sessions,
    async join(livekitUrl, token) {
      const session = await joinWithHandedToken(livekitUrl, token, sampleRate);
      sessions.push(session);
      return session;
    },
    async stop() {
      for (const session of sessions) await session.close();
      await server.stop(true);
    },
  };
}
