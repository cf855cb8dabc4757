// A visitor who talks with the agent by voice, as the conversation suites run one: the agent's
// captions collected as they stream, the visitor's microphone published, the agent's audio heard.
import { type TextStreamReader, TrackKind } from '@livekit/rtc-node';
import { TRANSCRIPTION_TOPIC } from '../../src/contract/index.ts';
import { eventually, type Visitor } from './visitor.ts';
import { Listener, Microphone } from './voice.ts';

/** The agent's caption segments, each as far as it has arrived (chunk by chunk, in time with its voice). */
export function agentCaptions(visitor: Visitor): () => string[] {
  const segments = new Map<string, string>();
  visitor.room.registerTextStreamHandler(TRANSCRIPTION_TOPIC, (reader: TextStreamReader, from) => {
    if (from.identity !== visitor.agent()?.identity) return;
    void (async () => {
      for await (const text of reader)
        segments.set(reader.info.streamId, (segments.get(reader.info.streamId) ?? '') + text);
    })().catch(() => {
      // The room closed while a caption streamed ("Disconnected while receiving": the session
      // ended under it, by end_session say): what arrived stays, as a visitor's page keeps it.
    });
  });
  return () => [...segments.values()];
}

/** The visitor's microphone, published, and ears on the agent's audio once it arrives (within `timeoutMs`). */
export async function microphoneAndEars(
  visitor: Visitor,
  timeoutMs: number,
  what = "the agent's audio",
): Promise<{ microphone: Microphone; ears: Listener }> {
  const microphone = await Microphone.publish(visitor.room);
  const audio = await eventually(
    () => visitor.tracks.find((track) => track.kind === TrackKind.KIND_AUDIO),
    timeoutMs,
    what,
  );
  return { microphone, ears: new Listener(audio) };
}
