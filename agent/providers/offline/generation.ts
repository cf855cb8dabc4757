// What one generation of the offline reply model is asked and gives back, and what a reply
// stream (reply-stream.ts) needs of the model that runs it (llm.ts OfflineLLM).

import type { llm } from '@livekit/agents';
import type { SpokenLanguage } from '../../../src/contract/index.ts';
import type { LlamaChatResponse, LlamaFunctions, LlamaGrammar, LlamaHistoryItem, LlamaModelTurn } from './llama.ts';

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

/** An answer written from results: its words (not yet checked against them) and its tokens. */
export interface WrittenAnswer {
  written: string;
  tokens: number;
  /** Stopped by a newer generation: nothing usable was written. */
  superseded: boolean;
}

/** An answer written ahead: its words once written (null: it failed), and how to stop its writing. */
export interface AnswerInProgress {
  answer: Promise<WrittenAnswer | null>;
  stop(): void;
}

/** The answers after calls, written as their results come in (answer-ahead.ts AnswerAhead). */
export interface AnswersAhead {
  /** A reply made `calls`; their answer's prompt will be `prompt` of the turn with their results. */
  expect(calls: llm.FunctionCall[], prompt: (turn: LlamaModelTurn) => LlamaHistoryItem[]): void;
  /** The answer written ahead for exactly `history`, taken once; none: the caller writes it. */
  take(history: LlamaHistoryItem[]): AnswerInProgress | undefined;
}

/** The model a reply stream runs on (OfflineLLM). */
export interface ReplyModel {
  /** The language replies are in. */
  readonly language: SpokenLanguage;
  readonly options: { maxSentences: number };
  readonly answersAhead?: AnswersAhead;
  /** Runs one generation on the shared sequence, after stopping the one before. */
  _generate(
    history: LlamaHistoryItem[],
    signal: AbortSignal,
    onText: (text: string) => boolean,
    options?: GenerationOptions,
  ): Promise<Generation>;
}
