// What one generation of the offline reply model is asked and gives back, and what a reply
// stream (reply-stream.ts) needs of the model that runs it (llm.ts OfflineLLM).
import type { SpokenLanguage } from '../../../src/contract/index.ts';
import type { LlamaChatResponse, LlamaFunctions, LlamaGrammar, LlamaHistoryItem } from './llama.ts';

/** What one generation may override of the replies' settings (writeJson's). */
export interface GenerationLimits {
  grammar: LlamaGrammar;
  maxTokens: number;
}

export interface GenerationOptions {
  mostThreads?: number;
  /** The tools the model may call (no alphabet grammar then: node-llama-cpp takes one or the other). */
  functions?: LlamaFunctions;
  limits?: GenerationLimits;
  /** A second try's sampling (fallback-replies.ts RETRY_SAMPLING). */
  retry?: boolean;
  /** With `functions`: told as node-llama-cpp starts reading a call's parameters. */
  onCallBegun?: () => void;
}

export interface Generation {
  tokens: number;
  response: LlamaChatResponse | null;
  /** Stopped by a newer generation (the newest turn wins): it answers, not this one. */
  superseded: boolean;
}

/** The model a reply stream runs on (OfflineLLM). */
export interface ReplyModel {
  /** The language replies are in. */
  readonly language: SpokenLanguage;
  readonly options: { maxSentences: number };
  /** Runs one generation on the shared sequence, after stopping the one before. */
  _generate(
    history: LlamaHistoryItem[],
    signal: AbortSignal,
    onText: (text: string) => boolean,
    options?: GenerationOptions,
  ): Promise<Generation>;
}
