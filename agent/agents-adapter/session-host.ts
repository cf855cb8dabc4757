// The job's conversation and agents' AgentSession (agent/conversation): a private member.
import type { voice } from '@livekit/agents';

/**
 * Given a room, AgentSession.start also starts a remote-session host (`sessionHost`, private)
 * that serves the linked participant, the visitor: on `lk.agent.session` it answers
 * `getAgentInfo` with the agent's instructions and takes `runInput` text past typed chat's
 * rules, and it streams every event of the session (tool calls and their results included) to
 * them. There is no option to leave it out, and a RoomIO made before start cannot work (it
 * reads the running session's agent) nor after (1.9 never attaches an input set late), so it
 * is closed once the session has started. It never heard the visitor: agent/room-inputs.ts
 * refused its topic before start. Shown by test/conversation/visitor-reach.test.ts.
 */
export async function closeRemoteSessionHost(session: voice.AgentSession): Promise<void> {
  const internals = session as unknown as { sessionHost?: { close(): Promise<void> } };
  await internals.sessionHost?.close();
  internals.sessionHost = undefined;
}
