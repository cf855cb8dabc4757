// The AgentSession's speech in progress (agent/conversation/orders.ts) and its tool outputs as
// they complete (the offline model's answer ahead): internal members.
import { type llm, voice } from '@livekit/agents';

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

/**
 * Calls `listener` with each tool call's output as the call completes. agents adds it to the
 * reply's speech handle then, but tells the session (`function_tools_executed`) only once the
 * words spoken before it (the filler) have been heard, and only then asks the model for the
 * answer; the offline model writes that answer meanwhile (answer-ahead.ts). The speech handle's
 * item callbacks are internal (`_addItemAddedCallback`). Shown by
 * test/agent/offline/tool-calls.test.ts (in an AgentSession: the answer is begun as the output
 * comes in, not when agents asks for it).
 */
export function onToolOutput(session: voice.AgentSession, listener: (output: llm.FunctionCallOutput) => void): void {
  session.on(voice.AgentSessionEventTypes.SpeechCreated, ({ speechHandle }) => {
    speechHandle._addItemAddedCallback((item) => {
      if (item.type === 'function_call_output') listener(item);
    });
  });
}
