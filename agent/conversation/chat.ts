// What the visitor types (agents' `lk.chat` text streams, as LiveKit's client components send
// them): answered like speech, but only from the session's visitor, at most CHAT_MAX_CHARS of
// each message, and no more often than every CHAT_MIN_INTERVAL_MS (faster ones are dropped: a
// script cannot drive the language model in a loop). A stream is closed, unread, when it is
// not the visitor's or comes too soon, and once its first CHAT_MAX_CHARS are in: rtc-node then
// drops the rest, so a huge message costs neither memory nor time. Every other topic has no
// handler at all (agent/room-inputs.ts).
import type { voice } from '@livekit/agents';
import type { Room, TextStreamReader } from '@livekit/rtc-node';
import { CHAT_TOPIC } from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';

export { CHAT_TOPIC };
export const CHAT_MAX_CHARS = 2_000;
export const CHAT_MIN_INTERVAL_MS = 2_000;

export interface ChatInput {
  stop(): void;
}

async function readAtMost(reader: TextStreamReader, chars: number): Promise<string> {
  let text = '';
  // Leaving the loop early closes the reader.
  for await (const chunk of reader) {
    text += chunk;
    if (text.length >= chars) break;
  }
  return text.slice(0, chars);
}

export function acceptChat(
  room: Room,
  visitorIdentity: string,
  session: voice.AgentSession,
  logger: Pick<AgentLogger, 'warn'>,
  /** Takes a message that needs no reply (a farewell that ends the session): true when it did. */
  handled: (said: string) => boolean = () => false,
): ChatInput {
  let lastAt = -Infinity;
  const onText = (reader: TextStreamReader, from: { identity: string }) => {
    if (from.identity !== visitorIdentity) {
      void reader.close();
      return;
    }
    const now = performance.now();
    if (now - lastAt < CHAT_MIN_INTERVAL_MS) {
      logger.warn('a chat message came too soon after the last one; dropped');
      void reader.close();
      return;
    }
    lastAt = now;
    void (async () => {
      const said = (await readAtMost(reader, CHAT_MAX_CHARS)).trim();
      if (!said) return;
      session.interrupt();
      if (!handled(said)) session.generateReply({ userInput: said });
    })().catch((error: unknown) => logger.warn({ err: error }, 'a chat message could not be read'));
  };
  room.registerTextStreamHandler(CHAT_TOPIC, onText);
  return { stop: () => room.unregisterTextStreamHandler(CHAT_TOPIC) };
}
