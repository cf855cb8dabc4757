// What the visitor types (agents' `lk.chat` text streams, as LiveKit's client components send
// them): answered like speech, but only from the session's visitor, at most CHAT_MAX_CHARS of
// each message (read through to the end without keeping the rest, so a huge stream costs no
// memory), and no more often than every CHAT_MIN_INTERVAL_MS (faster ones are dropped: a
// script cannot drive the language model in a loop). Every other data a visitor sends (data
// packets, other topics) has no handler and is ignored.
import { voice } from '@livekit/agents';
import type { Room, TextStreamReader } from '@livekit/rtc-node';

export const CHAT_TOPIC = 'lk.chat';
export const CHAT_MAX_CHARS = 2_000;
export const CHAT_MIN_INTERVAL_MS = 2_000;

export interface ChatInput {
  stop(): void;
}

export function acceptChat(room: Room, visitorIdentity: string, session: voice.AgentSession, logger: { warn(message: string): void }): ChatInput {
  let lastAt = -Infinity;
  const onText = (reader: TextStreamReader, from: { identity: string }) => {
    void (async () => {
      let text = '';
      for await (const chunk of reader) if (text.length < CHAT_MAX_CHARS) text += chunk;
      if (from.identity !== visitorIdentity) return;
      const now = performance.now();
      if (now - lastAt < CHAT_MIN_INTERVAL_MS) {
        logger.warn('a chat message came too soon after the last one; dropped');
        return;
      }
      const said = text.slice(0, CHAT_MAX_CHARS).trim();
      if (!said) return;
      lastAt = now;
      session.interrupt();
      session.generateReply({ userInput: said });
    })().catch((error: unknown) => logger.warn(`a chat message could not be read: ${String(error)}`));
  };
  room.registerTextStreamHandler(CHAT_TOPIC, onText);
  return { stop: () => room.unregisterTextStreamHandler(CHAT_TOPIC) };
}
