// LemonSlice's hosted avatar (the agent's half of pipeline `lemonslice`, offered when
// LEMONSLICE_API_KEY is set): LemonSlice animates the identity's photo itself. The session
// asks its API to join the room, with agents' own LemonSlice plugin making the call, given the
// token the job minted for the avatar (publishing on the agent's behalf); the rest is the
// avatar protocol every service speaks (agent/avatar/service.ts). LemonSlice takes the
// speech at 16 kHz.
import { AvatarSession } from '@livekit/agents-plugin-lemonslice';
import { LEMONSLICE_PIPELINE_ID } from '../../../src/contract/index.ts';
import { startLemonSliceAgent } from '../../agents-adapter/index.ts';
import type { AvatarServicePipeline } from '../types.ts';

/** The rate LemonSlice takes the agent's speech at (the plugin's own). */
const LEMONSLICE_SAMPLE_RATE = 16_000;

export function lemonslicePipeline(settings: { apiKey: string; apiUrl: string | undefined }): AvatarServicePipeline {
  return {
    kind: 'service',
    id: LEMONSLICE_PIPELINE_ID,
    sampleRate: LEMONSLICE_SAMPLE_RATE,
    async start(request) {
      const imageUrl = request.identity?.image_url;
      if (!imageUrl) throw new Error('LemonSlice needs the identity’s photo');
      const avatar = new AvatarSession({
        agentImageUrl: imageUrl,
        apiKey: settings.apiKey,
        apiUrl: settings.apiUrl,
        avatarParticipantIdentity: request.avatarParticipantIdentity,
        // One attempt: the job falls back to the stand-in rather than keep the visitor waiting.
        connOptions: { maxRetry: 0, retryIntervalMs: 0, timeoutMs: 10_000 },
      });
      // The plugin's public start() wants the AgentSession, which our avatar precedes (it
      // streams from the job's first second): its API call alone, with our token (agents-adapter).
      const sessionId = await startLemonSliceAgent(avatar, request.livekitUrl, request.token);
      if (!sessionId) throw new Error('LemonSlice did not start a session');
      // LemonSlice leaves with the room; the job removes its participant when the session ends.
      return { close: async () => {} };
    },
  };
}
