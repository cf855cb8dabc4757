// The greeting's voice, made while the job waits for its visitor (issue 45 point 1): with the
// offline voice the greeting was synthesised only once the visitor could hear it, and its first
// sound reached them ~1.6 s after they joined (p50, bench/conversation --greetings). Its text is
// known from the dispatch, so the offline voice speaks it into memory at the job's start, and the
// greeting plays those frames (their lip cues with them). A visitor who never comes costs that one
// synthesis, dropped with the job; a cloud voice is not asked ahead (each synthesis is billed).

import { ReadableStream } from 'node:stream/web';
import type { tts } from '@livekit/agents';
import type { AudioFrame } from '@livekit/rtc-node';
import type { ProviderSettings } from '../../src/config.ts';
import type { ParsedDispatch } from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import { offlineVoice } from '../providers/index.ts';
import type { OfflineModels } from '../providers/offline/index.ts';
import { plannedGreeting } from './greeting.ts';

export interface PreparedGreeting {
  text: string;
  /** The greeting's frames once synthesised; null if the synthesis failed (the greeting is then synthesised as it is said). */
  frames: Promise<AudioFrame[] | null>;
}

export function prepareGreeting(voice: tts.TTS, text: string, logger: Pick<AgentLogger, 'info'>): PreparedGreeting {
  const frames = (async () => {
    const out: AudioFrame[] = [];
    for await (const audio of voice.synthesize(text)) out.push(audio.frame);
    return out.length > 0 ? out : null;
  })().catch((error: unknown) => {
    logger.info({ err: error }, 'the greeting could not be prepared; it is synthesised when said');
    return null;
  });
  return { text, frames };
}

/**
 * The session's planned greeting, voiced ahead by its offline voice; null when there is none or
 * a cloud voice speaks (job.ts calls it as the job starts, beside the face's loading).
 */
export function prepareSessionGreeting(
  metadata: ParsedDispatch,
  settings: ProviderSettings,
  offline: OfflineModels | undefined,
  logger: Pick<AgentLogger, 'info'>,
): PreparedGreeting | null {
  const text = plannedGreeting(metadata);
  if (!text || settings.elevenlabs || !offline) return null;
  return prepareGreeting(offlineVoice({ language: metadata.language, voice: metadata.voice }, offline), text, logger);
}

/** Frames as the stream `AgentSession.say` plays instead of synthesising. */
export function playable(frames: readonly AudioFrame[]): ReadableStream<AudioFrame> {
  return new ReadableStream({
    start(controller) {
      for (const frame of frames) controller.enqueue(frame);
      controller.close();
    },
  });
}
