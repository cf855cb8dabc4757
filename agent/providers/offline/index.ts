import { basename } from 'node:path';
import type { stt } from '@livekit/agents';
import { SPOKEN_LANGUAGES, type SpokenLanguage } from '../../../src/contract/index.ts';
import { replyGrammar } from './alphabets.ts';
import type { LlamaContext, LlamaGrammar, LlamaModel } from './llama.ts';
import { OfflineLLM, type OfflineLLMOptions, type ReplyThreads } from './llm.ts';
import { inModelsDir, type Manifest, openLanguageModels, readManifest } from './models-folder.ts';
import { SentenceEnd } from './sentence-end.ts';
import { SpeechServer } from './speech-server.ts';
import { OfflineSTT } from './stt.ts';
import { OfflineTTS, type OfflineTTSOptions, type OfflineVoiceProfile } from './tts.ts';

export { OfflineLLM, type OfflineLLMOptions } from './llm.ts';
export { quotedDataOf, smallModelPrompt, toLlamaHistory, withQuotedData } from './prompt.ts';
export { ReplyChunker, splitClauses } from './reply-chunks.ts';
export { loadOfflineSentenceEnd, SentenceEnd } from './sentence-end.ts';
export { joinFrames, OfflineSTT } from './stt.ts';
export {
  OFFLINE_TTS_SAMPLE_RATE,
  OfflineTTS,
  type OfflineTTSOptions,
  type OfflineVoiceProfile,
  planVoice,
} from './tts.ts';

export interface OfflineModels {
  /** Pinned language: recognise in it; 'auto': detect (SpeechData.language carries the ISO code). */
  stt(language: SpokenLanguage | 'auto'): stt.STT;
  /** Shares the one loaded reply model: one session per job, so one generation at a time. */
  llm(): OfflineLLM;
  /** Speaks `language`; `profile` null = the default English voice (Piper joe). 22 050 Hz mono. */
  tts(options: { language: SpokenLanguage; profile: OfflineVoiceProfile | null }): OfflineTTS;
  /** SmolLM2-135M's reading of whether the visitor's words end a sentence (for end-of-turn detection). */
  sentenceEnd: SentenceEnd;
  close(): Promise<void>;
}

export interface LoadOfflineModelsOptions {
  modelsDir: string;
  /** CPU threads of Whisper and Piper (default 2: measured 0.6 s vs 0.8 s per utterance with tiny.en). */
  speechThreads?: number;
  /**
   * CPU threads of the reply about to start (default 1), asked before each reply: llama.cpp's
   * threads spin-wait for each other, so more threads than the cores have free collapse
   * (measured under load: 60 tokens in 1 s with one thread, 15–50 s with two). The job passes
   * two while its session has the machine's cores to itself (agent/sessions-here.ts).
   */
  replyThreads?: () => number;
  llm?: Partial<OfflineLLMOptions>;
  /** espeak-ng command (default: from PATH; the bootstrap installs it). */
  espeakCommand?: string;
}

/**
 * The language model alone (bench/conversation/eval/text-only.ts measures candidates with it):
 * the manifest's, or `modelPath` instead.
 */
export async function loadOfflineLanguageModel(
  modelsDir: string,
  options: { threads?: number; modelPath?: string; llm?: Partial<OfflineLLMOptions> } = {},
) {
  const manifest = await readManifest(modelsDir);
  const threads = options.threads ?? 1;
  const loaded = await loadLanguageModel(
    { ...manifest, llm: options.modelPath ?? manifest.llm },
    modelsDir,
    () => threads,
    null,
  );
  return { llm: new OfflineLLM(loaded.reply, options.llm), close: loaded.close };
}

/** Whisper and Piper alone, in their Python process (the tests ask it directly). */
export async function loadOfflineSpeech(modelsDir: string, threads = 2): Promise<SpeechServer> {
  return startSpeechServer(await readManifest(modelsDir), modelsDir, threads);
}

function startSpeechServer(manifest: Manifest, modelsDir: string, threads: number): Promise<SpeechServer> {
  const resolve = (path: string) => inModelsDir(modelsDir, path);
  return SpeechServer.start({
    python: resolve(manifest.python),
    whisper: { en: resolve(manifest.whisper.en), multilingual: resolve(manifest.whisper.multilingual) },
    piper: { model: resolve(manifest.piper.model), config: resolve(manifest.piper.config) },
    threads,
  });
}

/** The most threads a reply may take (its context is made for this many; each reply is given one or two). */
const MAX_REPLY_THREADS = 2;

/**
 * The reply model, and the reader's (`readerFile`, null: none) on the same node-llama-cpp; one
 * file serving both is loaded once. Before each reply the instance's thread budget is set to
 * what `replyThreads` says.
 */
async function loadLanguageModel(
  manifest: Manifest,
  modelsDir: string,
  replyThreads: () => number,
  readerFile: string | null,
) {
  const files = readerFile && readerFile !== manifest.llm ? [manifest.llm, readerFile] : [manifest.llm];
  const { llamaCpp, llama, models, release } = await openLanguageModels(manifest, modelsDir, files);
  const [replyModel, readerModel = replyModel] = models as [LlamaModel, LlamaModel?];
  let context: LlamaContext | undefined;
  try {
    context = await replyModel.createContext({
      contextSize: 2048,
      threads: { ideal: MAX_REPLY_THREADS, min: 1 },
      // Replies in words, and turns that may call (llm.ts LoadedReplyModel.callsChat): ~25 MB each.
      sequences: 2,
    });
    const chat = new llamaCpp.LlamaChat({ contextSequence: context.getSequence() });
    const callsChat = new llamaCpp.LlamaChat({ contextSequence: context.getSequence() });
    const alphabets = Object.fromEntries(
      await Promise.all(
        SPOKEN_LANGUAGES.map(
          async (language) => [language, await llama.createGrammar({ grammar: replyGrammar(language) })] as const,
        ),
      ),
    ) as Record<SpokenLanguage, LlamaGrammar>;
    const created = context;
    const threads: ReplyThreads = {
      choose: (most = MAX_REPLY_THREADS) => {
        llama.maxThreads = Math.min(most, MAX_REPLY_THREADS, Math.max(1, Math.floor(replyThreads())));
      },
      used: () => created.currentThreads,
    };
    return {
      reply: {
        chat,
        callsChat,
        name: basename(manifest.llm).replace(/\.gguf$/i, ''),
        alphabets,
        threads,
        jsonGrammar: (schema: Record<string, unknown>) => llama.createGrammarForJsonSchema(schema),
      },
      readerModel,
      close: async () => {
        await chat.dispose();
        await callsChat.dispose();
        await context?.dispose();
        await release();
      },
    };
  } catch (error) {
    await context?.dispose();
    await release();
    throw error;
  }
}

/** Starts the helper process and loads the models; safe to call in a job process's prewarm. */
export async function loadOfflineModels(options: LoadOfflineModelsOptions): Promise<OfflineModels> {
  const { modelsDir } = options;
  const manifest = await readManifest(modelsDir);
  // Both load at once: Python imports and reads Whisper/Piper while llama.cpp maps the GGUF.
  const [speech, language] = await Promise.allSettled([
    startSpeechServer(manifest, modelsDir, options.speechThreads ?? 2),
    loadLanguageModel(manifest, modelsDir, options.replyThreads ?? (() => 1), manifest.reader),
  ]);
  if (speech.status === 'rejected' || language.status === 'rejected') {
    if (speech.status === 'fulfilled') await speech.value.close();
    if (language.status === 'fulfilled') await language.value.close();
    throw speech.status === 'rejected' ? speech.reason : (language as PromiseRejectedResult).reason;
  }
  const server = speech.value;
  const languageModel = new OfflineLLM(language.value.reply, options.llm);
  let sentenceEnd: SentenceEnd;
  try {
    sentenceEnd = await SentenceEnd.on(language.value.readerModel);
  } catch (error) {
    await Promise.all([server.close(), language.value.close()]);
    throw error;
  }
  const espeakCommand = options.espeakCommand ?? 'espeak-ng';
  let closing: Promise<void> | null = null;

  return {
    stt: (spoken) => new OfflineSTT(server, spoken),
    llm: () => languageModel,
    tts: (voice: OfflineTTSOptions) => new OfflineTTS(server, espeakCommand, voice),
    sentenceEnd,
    // The sentence reader's context lives on the model: it goes first.
    close: () =>
      (closing ??= sentenceEnd
        .close()
        .then(() => Promise.all([server.close(), language.value.close()]))
        .then(() => {})),
  };
}
