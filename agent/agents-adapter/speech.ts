// The AgentSession's speech in progress (agent/conversation/orders.ts): an internal member.
import type { voice } from '@livekit/agents';

/**
 * The speech the session is playing now, or undefined. `session.say()` returns a SpeechHandle,
 * but the chat message agents adds for it carries no link back to it; that message is added
 * while its speech is the current one (agents 1.9's AgentActivity keeps `currentSpeech` until
 * the speech's task is over), so this is how a transcript turn finds the order that said it.
 * Shown by test/conversation/session-orders.test.ts (a said turn stored `ordered_by: api`).
 */
export function currentSpeech(session: voice.AgentSession): voice.SpeechHandle | undefined {
  return session._activity?.currentSpeech ?? undefined;
}
