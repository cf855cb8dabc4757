// Where a session's ears, mind and voice come from: each of speech-to-text, the language
// model and text-to-speech is a cloud plugin when its key is configured, otherwise the
// offline model the bootstrap installed. The conversation sees only the agents interfaces.
import { type llm, type stt, tts, type VAD } from '@livekit/agents';
import * as deepgram from '@livekit/agents-plugin-deepgram';
import * as elevenlabs from '@livekit/agents-plugin-elevenlabs';
import * as openai from '@livekit/agents-plugin-openai';
import type { ProviderSettings } from '../../src/config.ts';
import {
  DEFAULT_ELEVENLABS_VOICE_ID,
  type DispatchVoice,
  type Language,
  type SpokenLanguage,
} from '../../src/contract/index.ts';
import { askModel, type ModelAnswer } from './model-answer.ts';
import { EarlyRecognition } from './offline/early-recognition.ts';
import type { OfflineModels } from './offline/index.ts';
import { ReplyChunker } from './offline/reply-chunks.ts';

export interface SessionProviders {
  stt: stt.STT;
  llm: llm.LLM;
  tts: tts.TTS;
  /** Switches the voice to another language for the next replies (auto mode follows the visitor). */
  speakIn(language: SpokenLanguage): void;
  /**
   * Called once the greeting is said: a provider that can prepare the replies' common start
   * does (the offline model evaluates it while the greeting plays); the cloud ones need not.
   */
  prepareReplies(instructions: string, greeting: string, tools?: llm.ToolContext): void;
  /**
   * A tool call's output, as the call completes: a provider that is slow to write the answer
   * starts it now (the offline model, while the filler is heard); the cloud ones need not.
   */
  toolResultIn(output: llm.FunctionCallOutput): void;
  /**
   * One JSON object `schema` allows, the model's answer to `question` (after the conversation:
   * the outcome): the offline model samples under a grammar made from the schema, a cloud one
   * answers in OpenAI's structured output (strict).
   */
  writeJson(question: string, schema: Record<string, unknown>, timeoutMs: number): Promise<ModelAnswer>;
  /** Which provider serves each part, for logs. */
  names: { stt: string; llm: string; tts: string };
}

export interface ProviderChoice {
  /** The session's effective language mode. */
  language: Language;
  /** Null: the default English-only voice. */
  voice: DispatchVoice | null;
  /** The session's VAD: the offline recogniser cuts utterances with it (and starts in pauses). */
  vad: VAD;
}

/** True when some part of a session would run on the offline models (they are loaded ahead). */
export function needsOfflineModels(settings: ProviderSettings): boolean {
  return !settings.deepgram || !settings.openai || !settings.elevenlabs;
}

/**
 * `transcript` turns with cloud replies: SmolLM2 reads the visitor's sentences in the worker's
 * inference process (offline/sentence-end-runner.ts). With the offline models the job reads them
 * with the model it has.
 */
export function readsSentencesInInferenceProcess(settings: ProviderSettings): boolean {
  return settings.turns.detection === 'transcript' && !needsOfflineModels(settings);
}

/** The session's offline voice (the identity's profile, the first language), as its replies speak. */
export function offlineVoice(
  choice: Omit<ProviderChoice, 'vad'>,
  models: OfflineModels,
): ReturnType<OfflineModels['tts']> {
  const profile = choice.voice
    ? { pitchHz: choice.voice.profile.pitch_hz, wordsPerMinute: choice.voice.profile.words_per_minute }
    : null;
  // Auto mode greets in English before anyone has spoken.
  return models.tts({ language: choice.language === 'auto' ? 'en' : choice.language, profile });
}

export function createProviders(
  settings: ProviderSettings,
  choice: ProviderChoice,
  offline: OfflineModels | undefined,
): SessionProviders {
  const needOffline = (): OfflineModels => {
    if (!offline) throw new Error('a provider has no cloud key and the offline models are not loaded');
    return offline;
  };
  // Auto mode greets in English before anyone has spoken.
  const firstLanguage: SpokenLanguage = choice.language === 'auto' ? 'en' : choice.language;

  const speechToText = settings.deepgram
    ? new deepgram.STT({
        apiKey: settings.deepgram.apiKey,
        ...(settings.deepgram.baseUrl ? { baseUrl: settings.deepgram.baseUrl } : {}),
        model: settings.deepgram.model,
        // nova-3's `multi` transcribes code-switching speech and reports each utterance's language.
        language: choice.language === 'auto' ? 'multi' : choice.language,
      })
    : // Whisper recognises whole utterances: cut by the session's VAD, asked from the first pause.
      new EarlyRecognition(needOffline().stt(choice.language), choice.vad);

  const offlineLanguageModel = settings.openai ? null : needOffline().llm();
  offlineLanguageModel?.answerIn(firstLanguage);
  const languageModel =
    offlineLanguageModel ??
    new openai.LLM({
      apiKey: settings.openai!.apiKey,
      ...(settings.openai!.baseUrl ? { baseURL: settings.openai!.baseUrl } : {}),
      model: settings.openai!.model,
    });

  let textToSpeech: tts.TTS;
  let speakIn: (language: SpokenLanguage) => void;
  if (settings.elevenlabs) {
    const voice = new elevenlabs.TTS({
      apiKey: settings.elevenlabs.apiKey,
      ...(settings.elevenlabs.baseUrl ? { baseURL: settings.elevenlabs.baseUrl } : {}),
      // A voice cloned while ElevenLabs was not configured has no id there: the preset of
      // the default voice speaks instead (decisions.md).
      voiceId: choice.voice?.elevenlabs_voice_id ?? DEFAULT_ELEVENLABS_VOICE_ID,
      model: settings.elevenlabs.model,
      language: firstLanguage,
      encoding: 'pcm_22050',
      // Sentence by sentence, each flushed: speech starts with the first sentence instead of
      // waiting for ElevenLabs' 120-character buffer or the end of the reply.
      autoMode: true,
    });
    textToSpeech = voice;
    speakIn = (language) => {
      voice.updateOptions({ language });
      offlineLanguageModel?.answerIn(language);
    };
  } else {
    const voice = offlineVoice(choice, needOffline());
    // Cut by clause, not agents' default sentences: the first words are heard sooner.
    textToSpeech = new tts.StreamAdapter(voice, new ReplyChunker());
    speakIn = (language) => {
      voice.updateOptions({ language });
      offlineLanguageModel?.answerIn(language);
    };
  }

  return {
    stt: speechToText,
    llm: languageModel,
    tts: textToSpeech,
    speakIn,
    prepareReplies: (instructions, greeting, tools) => void offlineLanguageModel?.prime(instructions, greeting, tools),
    toolResultIn: (output) => offlineLanguageModel?.toolResultIn(output),
    writeJson: (question, schema, timeoutMs) =>
      offlineLanguageModel
        ? offlineLanguageModel.writeJson(question, schema, timeoutMs)
        : askModel(languageModel, question, timeoutMs, {
            response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema } },
          }),
    names: {
      stt: settings.deepgram ? 'deepgram' : 'offline',
      llm: settings.openai ? 'openai-compatible' : 'offline',
      tts: settings.elevenlabs ? 'elevenlabs' : 'offline',
    },
  };
}
