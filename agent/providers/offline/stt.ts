// Whisper as an agents STT. It recognises whole utterances (no streaming): AgentSession wraps
// it in stt.StreamAdapter with the session's VAD, which cuts the visitor's turns.
import { type APIConnectOptions, type AudioBuffer, asLanguageCode, stt } from '@livekit/agents';
import type { AudioFrame } from '@livekit/rtc-node';
import { SPOKEN_LANGUAGES, type SpokenLanguage } from '../../../src/contract/index.ts';
import type { SpeechServer } from './speech-server.ts';

/**
 * One frame from the VAD's list of 10–20 ms frames. Not agents' mergeFrames: it re-spreads the
 * whole array for every frame (quadratic; measured 8 s for a 7 s utterance at 48 kHz).
 */
export function joinFrames(buffer: AudioBuffer): {
  data: Int16Array;
  sampleRate: number;
  channels: number;
  samplesPerChannel: number;
} {
  const frames: AudioFrame[] = Array.isArray(buffer) ? buffer : [buffer];
  const first = frames[0];
  if (!first) throw new TypeError('no audio to recognise');
  const { sampleRate, channels } = first;
  let length = 0;
  for (const frame of frames) {
    if (frame.sampleRate !== sampleRate || frame.channels !== channels)
      throw new TypeError('frames of one utterance differ in format');
    length += frame.samplesPerChannel * channels;
  }
  const data = new Int16Array(length);
  let offset = 0;
  for (const frame of frames) {
    data.set(frame.data.subarray(0, frame.samplesPerChannel * channels), offset);
    offset += frame.samplesPerChannel * channels;
  }
  return { data, sampleRate, channels, samplesPerChannel: length / channels };
}

export class OfflineSTT extends stt.STT {
  label = 'offline.STT';
  readonly #server: SpeechServer;
  /** null: detect the language of each utterance. */
  readonly #language: SpokenLanguage | null;

  constructor(server: SpeechServer, language: SpokenLanguage | 'auto') {
    super({ streaming: false, interimResults: false, alignedTranscript: false });
    this.#server = server;
    this.#language = language === 'auto' ? null : language;
  }

  /** Whisper tiny.en for English (fast and exact), Whisper base for the rest and for detection. */
  override get model(): string {
    return this.#language === 'en' ? 'whisper-tiny.en' : 'whisper-base';
  }

  override get provider(): string {
    return 'likeness-offline';
  }

  protected async _recognize(buffer: AudioBuffer, abortSignal?: AbortSignal): Promise<stt.SpeechEvent> {
    const frame = joinFrames(buffer);
    const { sampleRate, channels, samplesPerChannel } = frame;
    let mono = frame.data;
    if (channels > 1) {
      mono = new Int16Array(samplesPerChannel);
      for (let i = 0; i < samplesPerChannel; i++) {
        let sum = 0;
        for (let c = 0; c < channels; c++) sum += frame.data[i * channels + c]!;
        mono[i] = Math.round(sum / channels);
      }
    }
    const result = await this.#server.transcribe(
      mono,
      sampleRate,
      {
        model: this.#language === 'en' ? 'en' : 'multilingual',
        language: this.#language,
        allowed: SPOKEN_LANGUAGES,
      },
      abortSignal,
    );
    return {
      type: stt.SpeechEventType.FINAL_TRANSCRIPT,
      alternatives: [
        {
          text: result.text,
          language: asLanguageCode(result.language),
          startTime: 0,
          endTime: samplesPerChannel / sampleRate,
          confidence: result.probability,
        },
      ],
    };
  }

  stream(_options?: { connOptions?: APIConnectOptions }): stt.SpeechStream {
    throw new Error(
      'offline.STT recognises whole utterances: wrap it in stt.StreamAdapter with a VAD (AgentSession does)',
    );
  }
}
