// Beyond Presence's hosted avatar (the agent's half of pipeline `bey`, offered when BEY_API_KEY
// is set): Bey animates the avatar the identity names (`provider_avatar_id` in the dispatch).
// The session asks Bey's API to join the room, with agents' own Bey plugin making the call,
// given the token the job minted for the avatar (publishing on the agent's behalf); the rest is
// the avatar protocol every service speaks (agent/avatar/service.ts).
import { AvatarSession } from '@livekit/agents-plugin-bey';
import type { HostedAvatar } from '../../../src/config.ts';
import { BEY_PIPELINE_ID } from '../../../src/contract/index.ts';
import { startBeyAgent } from '../../agents-adapter/index.ts';
import type { AvatarServicePipeline } from '../types.ts';

export function beyPipeline(settings: HostedAvatar<string>): AvatarServicePipeline {
  return {
    kind: 'service',
    id: BEY_PIPELINE_ID,
    async start(request) {
      const avatarId = request.identity?.provider_avatar_id;
      if (!avatarId) throw new Error('Beyond Presence needs the identity’s Bey avatar (provider_avatar_id)');
      const avatar = new AvatarSession({
        avatarId,
        apiKey: settings.apiKey,
        apiUrl: settings.apiUrl,
        avatarParticipantIdentity: request.avatarParticipantIdentity,
        // One attempt, 10 s: the job falls back to our own face rather than keep the visitor waiting.
        connOptions: { maxRetry: 1, retryIntervalMs: 0, timeoutMs: 10_000 },
      });
      // The plugin's public start() wants the AgentSession, which our avatar precedes (it
      // streams from the job's first second): its API call alone, with our token (agents-adapter).
      await startBeyAgent(avatar, request.livekitUrl, request.token);
      return { close: async () => {} };
    },
  };
}
