// Hosted avatars (agent/pipelines/{lemonslice,bey}) and agents' avatar plugins: their API call,
// which the plugins keep TypeScript-private.
//
// A plugin's public `AvatarSession.start(agentSession, room)` mints the avatar's token, makes
// the call, and points the AgentSession's audio output at the avatar. Our avatar comes before
// the AgentSession: it streams from the job's first second (billing starts at its first frame,
// and a failed service falls back to our own face at once), while the session is made once the
// visitor is there and the offline models are in, possibly seconds later (agent/job.ts). So
// the job mints the token itself (agent/avatar/service.ts: publishing on the agent's behalf) and
// hands the session the avatar's audio output later; of the plugin, it uses the call alone.
// Shown against wire fakes of the providers by test/avatar/hosted-avatars.test.ts.
import type { AvatarSession as BeyAvatarSession } from '@livekit/agents-plugin-bey';
import type { AvatarSession as LemonSliceAvatarSession } from '@livekit/agents-plugin-lemonslice';

/** The plugin's `startAgent` (private in agents-plugin-lemonslice 1.9.0): LemonSlice's session id. */
interface LemonSliceCall {
  startAgent(livekitUrl: string, livekitToken: string, livekitSessionId?: string): Promise<string | undefined>;
}

/** The plugin's `startAgent` (private in agents-plugin-bey 1.4.2). */
interface BeyCall {
  startAgent(livekitUrl: string, livekitToken: string): Promise<void>;
}

/** Asks LemonSlice to join with `token`; resolves with its session id (none: it did not start one). */
export function startLemonSliceAgent(
  avatar: LemonSliceAvatarSession,
  livekitUrl: string,
  token: string,
): Promise<string | undefined> {
  return (avatar as unknown as LemonSliceCall).startAgent(livekitUrl, token);
}

/** Asks Beyond Presence to join with `token`. */
export function startBeyAgent(avatar: BeyAvatarSession, livekitUrl: string, token: string): Promise<void> {
  return (avatar as unknown as BeyCall).startAgent(livekitUrl, token);
}
