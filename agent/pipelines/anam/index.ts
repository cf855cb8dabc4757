// Anam's hosted avatar (the agent's half of pipeline `anam`, offered when ANAM_API_KEY is set):
// Anam animates the avatar the identity's training made from its photo (or the one it names),
// `provider_avatar_id` in the dispatch. The session asks Anam's API for a session token and
// starts its engine, with agents' own Anam plugin making both calls (its exported `AnamAPI`),
// given the token the job minted for the avatar (publishing on the agent's behalf); the rest is
// the avatar protocol every service speaks (agent/avatar/service.ts).
import { AnamAPI } from '@livekit/agents-plugin-anam';
import type { HostedAvatar } from '../../../src/config.ts';
import { ANAM_PIPELINE_ID, AVATAR_FRAME_SIZES } from '../../../src/contract/index.ts';
import type { AvatarServicePipeline } from '../types.ts';

export function anamPipeline(settings: HostedAvatar<string>): AvatarServicePipeline {
  return {
    kind: 'service',
    id: ANAM_PIPELINE_ID,
    async start(request) {
      const avatarId = request.identity?.provider_avatar_id;
      if (!avatarId || !request.identity) throw new Error('Anam needs the identity’s Anam avatar (provider_avatar_id)');
      // One attempt, 10 s: the job falls back to our own face rather than keep the visitor waiting.
      const api = new AnamAPI(settings.apiKey, settings.apiUrl, { maxRetry: 1, retryInterval: 0, timeout: 10 });
      const size = AVATAR_FRAME_SIZES[request.shape];
      const { sessionToken } = await api.createSessionToken({
        personaConfig: { name: `Likeness ${request.identity.identity_id}`, avatarId },
        livekitUrl: request.livekitUrl,
        livekitToken: request.token,
        sessionOptions: { videoWidth: size.width, videoHeight: size.height },
      });
      await api.startEngineSession({ sessionToken });
      // Anam leaves with the room; the job removes its participant when the session ends.
      return { close: async () => {} };
    },
  };
}
