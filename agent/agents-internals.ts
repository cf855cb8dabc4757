// The one place that reaches past @livekit/agents' public API, for what 1.9.0 offers no public
// way to do. Each function says what it works around; test/agent/agents-internals.test.ts pins
// the version they were written against, so an upgrade of the package starts here.
import type { voice } from '@livekit/agents';

/** The @livekit/agents version the functions below were checked against. */
export const AGENTS_VERSION = '1.9.0';

/**
 * Given a room, AgentSession.start also starts a remote-session host (`sessionHost`, private)
 * that serves the linked participant, the visitor: on `lk.agent.session` it answers
 * `getAgentInfo` with the agent's instructions and takes `runInput` text past typed chat's
 * rules, and it streams every event of the session (tool calls and their results included) to
 * them. There is no option to leave it out, and a RoomIO made before start cannot work (it
 * reads the running session's agent) nor after (1.9 never attaches an input set late), so it
 * is closed once the session has started. It never heard the visitor: agent/room-inputs.ts
 * refused its topic before start.
 */
export async function closeRemoteSessionHost(session: voice.AgentSession): Promise<void> {
  const internals = session as unknown as { sessionHost?: { close(): Promise<void> } };
  await internals.sessionHost?.close();
  internals.sessionHost = undefined;
}
