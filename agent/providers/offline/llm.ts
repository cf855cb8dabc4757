// The offline reply model (Qwen2.5-Coder-0.5B-Instruct, GGUF, through node-llama-cpp; the
// bootstrap's manifest names it) as an agents LLM. One model, context and sequence stay loaded
// for the whole job: the chat history is re-sent each turn, and node-llama-cpp only evaluates
// what is new since the last turn (the shared prefix is cached), so the first token comes quickly.
import { type APIConnectOptions, DEFAULT_API_CONNECT_OPTIONS, llm } from '@livekit/agents';
import type { SpokenLanguage } from '../../../src/contract/index.ts';
import type { ModelAnswer } from '../model-answer.ts';
import { AnswerAhead } from './answer-ahead.ts';
import { RETRY_SAMPLING } from './fallback-replies.ts';
import type { Generation, GenerationOptions, ReplyModel } from './generation.ts';
import { grammarSchema } from './json-grammar.ts';
import type { LlamaChat, LlamaChatResponse, LlamaFunctions, LlamaGrammar, LlamaHistoryItem } from './llama.ts';
import { promptStart, withToolsRule } from './prompt.ts';
import { OfflineLLMStream } from './reply-stream.ts';
import { offlineFunctions } from './tool-calls.ts';

export interface OfflineLLMOptions {
  /** Hard cap of one reply, in tokens. */
  maxTokens: number;
  /** Spoken replies stay short: generation stops after this many sentences. */
  maxSentences: number;
  temperature: number;
  /** Fixed seed: the same conversation gets the same reply (tests rely on it). */
  seed: number;
}

export const DEFAULT_LLM_OPTIONS: OfflineLLMOptions = { maxTokens: 60, maxSentences: 2, temperature: 0.2, seed: 7 };

/** The threads a reply gets, chosen before each one (index.ts: from the sessions on the machine). */
export interface ReplyThreads {
  /** Sets the threads of the generation about to start, at most `most`. */
  choose(most?: number): void;
  /** What the last evaluation used. */
  used(): number;
}

export interface LoadedReplyModel {
  chat: LlamaChat;
  /**
   * Where the generations that may call run (with `functions`), on a sequence of their own:
   * their prompt (the tools' rule, the functions' documentation) and the words-only one of the
   * answer after a result (`chat`) then each stay read, instead of evaluating one over the other
   * at every step of a tool turn. None: `chat` serves both.
   */
  callsChat?: LlamaChat;
  /** Shown as the LLM's model in agents' metrics and the session's providers. */
  name: string;
  /** Per language, the letters a reply may use (alphabets.ts). */
  alphabets?: Partial<Record<SpokenLanguage, LlamaGrammar>>;
  threads?: ReplyThreads;
  /** A grammar of the JSON a schema allows (writeJson); none: writeJson fails. */
  jsonGrammar?: (schema: Record<string, unknown>) => Promise<LlamaGrammar>;
}

/** Prompt tokens a chat's sequence has evaluated so far (those it reused are not counted). */
const evaluatedBy = (chat: LlamaChat) => chat.sequence?.tokenMeter.usedInputTokens ?? 0;

/** Tokens a JSON answer may take: an outcome of a few dozen short fields. */
const JSON_MAX_TOKENS = 600;

export class OfflineLLM extends llm.LLM implements ReplyModel {
  readonly #chat: LlamaChat;
  readonly #callsChat: LlamaChat;
  readonly #name: string;
  readonly #threads: ReplyThreads | undefined;
  readonly #options: OfflineLLMOptions;
  /** Per language, the letters a reply may use (alphabets.ts); none: unconstrained. */
  readonly #alphabets: Partial<Record<SpokenLanguage, LlamaGrammar>>;
  readonly #jsonGrammar: LoadedReplyModel['jsonGrammar'];
  /** The language replies are in (the session's, or in auto mode the visitor's last). */
  #language: SpokenLanguage = 'en';
  /** The generation that owns the sequence now; a new one stops it (the newest turn wins). */
  #running: { stop: AbortController; done: Promise<unknown>; superseded: boolean } | null = null;
  #lastEvaluated = 0;
  /** The answer after a call, written as the call's result comes in (toolResultIn). */
  readonly answersAhead = new AnswerAhead(this);

  constructor(loaded: LoadedReplyModel, options: Partial<OfflineLLMOptions> = {}) {
    super();
    this.#chat = loaded.chat;
    this.#callsChat = loaded.callsChat ?? loaded.chat;
    this.#name = loaded.name;
    this.#threads = loaded.threads;
    this.#options = { ...DEFAULT_LLM_OPTIONS, ...options };
    this.#alphabets = loaded.alphabets ?? {};
    this.#jsonGrammar = loaded.jsonGrammar;
  }

  label(): string {
    return 'offline.LLM';
  }

  override get model(): string {
    return this.#name;
  }

  /** The threads the last reply was evaluated with. */
  get threadsUsed(): number {
    return this.#threads?.used() ?? 1;
  }

  override get provider(): string {
    return 'likeness-offline';
  }

  chat({
    chatCtx,
    toolCtx,
    connOptions = DEFAULT_API_CONNECT_OPTIONS,
  }: {
    chatCtx: llm.ChatContext;
    toolCtx?: llm.ToolContextLike;
    connOptions?: APIConnectOptions;
  }): OfflineLLMStream {
    return new OfflineLLMStream(this, { chatCtx, toolCtx, connOptions: { ...connOptions, maxRetry: 0 } });
  }

  /** Runs one generation on the shared sequence, after stopping the one before; `response` holds its calls. */
  async _generate(
    history: LlamaHistoryItem[],
    signal: AbortSignal,
    onText: (text: string) => boolean,
    { mostThreads, functions, limits, retry = false, onCallBegun }: GenerationOptions = {},
  ): Promise<Generation> {
    const previous = this.#running;
    if (previous) {
      previous.superseded = true;
      previous.stop.abort();
      await previous.done.catch(() => {});
    }
    this.#threads?.choose(mostThreads);
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) stop.abort();
    let tokens = 0;
    const chat = functions ? this.#callsChat : this.#chat;
    const evaluatedBefore = evaluatedBy(chat);
    const done = chat.generateResponse(history, {
      maxTokens: limits?.maxTokens ?? this.#options.maxTokens,
      temperature: limits ? 0 : retry ? RETRY_SAMPLING.temperature : this.#options.temperature,
      seed: this.#options.seed + (retry ? RETRY_SAMPLING.seedOffset : 0),
      topK: 40,
      topP: 0.9,
      // A repeat penalty also covers the prompt's tokens: SmolLM2 then avoids the very facts
      // the instructions give it (measured: 0 of 8 replies used them, 8 of 8 without).
      repeatPenalty: false,
      // The reply keeps to the letters of the language it is in (alphabets.ts).
      ...(functions
        ? {
            functions,
            documentFunctionParams: true,
            maxParallelFunctionCalls: 1,
            ...(onCallBegun && { onFunctionCallParamsChunk: onCallBegun }),
          }
        : { grammar: limits?.grammar ?? this.#alphabets[this.#language] }),
      signal: stop.signal,
      stopOnAbortSignal: true,
      onTextChunk: (text) => {
        tokens++;
        if (!stop.signal.aborted && !onText(text)) stop.abort();
      },
    });
    const running = { stop, done, superseded: false };
    this.#running = running;
    let response: LlamaChatResponse | null = null;
    try {
      response = await done;
    } catch (error) {
      if (!stop.signal.aborted) throw error;
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (this.#running === running) this.#running = null;
    }
    this.#lastEvaluated = evaluatedBy(chat) - evaluatedBefore;
    return { tokens, response, superseded: running.superseded };
  }

  /** A tool's result came in (agents-adapter onToolOutput): the answer to it is written now. */
  toolResultIn(output: llm.FunctionCallOutput): void {
    this.answersAhead.resultIn(output);
  }

  /** Prompt tokens the last generation evaluated (not reused from what the sequence held). */
  get lastEvaluatedTokens(): number {
    return this.#lastEvaluated;
  }

  /**
   * One JSON object `schema` allows, the answer to `question`: sampled under a grammar made from
   * the schema, so it always parses and fits (after the conversation: the outcome).
   */
  async writeJson(question: string, schema: Record<string, unknown>, timeoutMs: number): Promise<ModelAnswer> {
    if (!this.#jsonGrammar) return { text: '', timedOut: false, failure: new Error('no JSON grammar') };
    const stop = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stop.abort();
    }, timeoutMs);
    let text = '';
    try {
      const grammar = await this.#jsonGrammar(grammarSchema(schema));
      const history: LlamaHistoryItem[] = [{ type: 'user', text: question }];
      const { response } = await this._generate(
        history,
        stop.signal,
        (chunk) => {
          text += chunk;
          return true;
        },
        { limits: { grammar, maxTokens: JSON_MAX_TOKENS } },
      );
      return { text: response?.response ?? text, timedOut };
    } catch (error) {
      return { text, timedOut, failure: error as Error };
    } finally {
      clearTimeout(timer);
    }
  }

  get options(): OfflineLLMOptions {
    return this.#options;
  }

  get language(): SpokenLanguage {
    return this.#language;
  }

  answerIn(language: SpokenLanguage): void {
    this.#language = language;
  }

  /**
   * Evaluates what every reply of this conversation starts with while the greeting plays, so
   * the first reply reuses it: the first turn's first token took 2.1 s against ~0.1 s for the
   * later ones. Without tools: the instructions, the language example, the greeting. With tools:
   * the instructions with the tools' rule and the functions' documentation, as a turn that may
   * call starts (OfflineLLMStream's prompt). A real turn stops it, as any newer generation does;
   * it waits for none. Settles once read (or stopped).
   */
  prime(instructions: string, greeting: string, tools?: llm.ToolContextLike): Promise<void> {
    const functions = offlineFunctions(tools as llm.ToolContext | undefined);
    const system = { type: 'system' as const, text: instructions };
    const words = promptStart(
      system,
      // No greeting (the start's "" one): the replies' prompts have none either.
      greeting ? { type: 'model', response: [greeting] } : undefined,
      this.#language,
    );
    // One thread: nobody waits for it, and other sessions may be starting (their first frames).
    const read = async (prefix: LlamaHistoryItem[], withFunctions?: LlamaFunctions) => {
      // A reply already running (a visitor who asked before the greeting began, on a loaded
      // machine) is never stopped for it: stopped, it ended with no token and nothing was said.
      if (this.#running) return false;
      const generation = await this._generate(prefix, new AbortController().signal, () => false, {
        mostThreads: 1,
        functions: withFunctions,
      });
      return !generation.superseded;
    };
    // The turn that may call first (the next question's); then, on its own sequence, the words
    // of the answer after a result (a newer generation than this one stops it: a turn began).
    const calls = functions ? read(withToolsRule([system]), functions) : Promise.resolve(true);
    return calls
      .then((done) => (done && (!functions || this.#callsChat !== this.#chat) ? read(words) : false))
      .then(
        () => undefined,
        () => undefined,
      );
  }
}
