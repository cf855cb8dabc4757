// The offline reply model (Qwen2.5-Coder-0.5B-Instruct, GGUF, through node-llama-cpp; the
// bootstrap's manifest names it) as an agents LLM. One model, context and sequence stay loaded
// for the whole job: the chat history is re-sent each turn, and node-llama-cpp only evaluates
// what is new since the last turn (the shared prefix is cached), so the first token comes quickly.
import {
  APIConnectionError,
  type APIConnectOptions,
  DEFAULT_API_CONNECT_OPTIONS,
  llm,
  shortuuid,
} from '@livekit/agents';
import type { SpokenLanguage } from '../../../src/contract/index.ts';
import { toolResultKind } from '../../conversation/tools.ts';
import type { ModelAnswer } from '../model-answer.ts';
import { REPEAT_PLEASE, RETRY_SAMPLING } from './fallback-replies.ts';
import { grammarSchema } from './json-grammar.ts';
import type {
  LlamaChat,
  LlamaChatResponse,
  LlamaFunctions,
  LlamaGrammar,
  LlamaHistoryItem,
  LlamaModelTurn,
} from './llama.ts';
import { promptStart, quotedDataOf, smallModelPrompt, toLlamaHistory, withQuotedData } from './prompt.ts';
import { fixedReplyTo, type ReadResult, replyToResults, TELL_ME_MORE } from './result-replies.ts';
import { exampleCopied, isToolTurn, offlineFunctions, TOOLS_RULE, withToolResults } from './tool-calls.ts';
import { type ReplyCall, ToolReplyText } from './tool-reply.ts';

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
  /** Shown as the LLM's model in agents' metrics and the session's providers. */
  name: string;
  /** Per language, the letters a reply may use (alphabets.ts). */
  alphabets?: Partial<Record<SpokenLanguage, LlamaGrammar>>;
  threads?: ReplyThreads;
  /** A grammar of the JSON a schema allows (writeJson); none: writeJson fails. */
  jsonGrammar?: (schema: Record<string, unknown>) => Promise<LlamaGrammar>;
}

/** What one generation may override of the replies' settings (writeJson's). */
interface GenerationLimits {
  grammar: LlamaGrammar;
  maxTokens: number;
}

interface GenerationOptions {
  mostThreads?: number;
  /** The tools the model may call (no alphabet grammar then: node-llama-cpp takes one or the other). */
  functions?: LlamaFunctions;
  limits?: GenerationLimits;
  /** A second try's sampling (fallback-replies.ts RETRY_SAMPLING). */
  retry?: boolean;
}

interface Generation {
  tokens: number;
  response: LlamaChatResponse | null;
  /** Stopped by a newer generation (the newest turn wins): it answers, not this one. */
  superseded: boolean;
}

/** Tokens a JSON answer may take: an outcome of a few dozen short fields. */
const JSON_MAX_TOKENS = 600;

export class OfflineLLM extends llm.LLM {
  readonly #chat: LlamaChat;
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

  constructor(loaded: LoadedReplyModel, options: Partial<OfflineLLMOptions> = {}) {
    super();
    this.#chat = loaded.chat;
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
    { mostThreads, functions, limits, retry = false }: GenerationOptions = {},
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
    const done = this.#chat.generateResponse(history, {
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
        ? { functions, documentFunctionParams: true, maxParallelFunctionCalls: 1 }
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
    return { tokens, response, superseded: running.superseded };
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
   * Evaluates what every reply of this conversation starts with (the instructions, the
   * language example, the greeting) while the greeting plays, so the first reply reuses it:
   * the first turn's first token took 2.1 s against ~0.1 s for the later ones. A real turn
   * stops it, as any newer generation does; it waits for none.
   */
  prime(instructions: string, greeting: string): void {
    // A reply already running (a visitor who asked before the greeting began, on a loaded
    // machine) is never stopped for it: stopped, it ended with no token and nothing was said.
    if (this.#running) return;
    const prefix = promptStart(
      { type: 'system', text: instructions },
      // No greeting (the start's "" one): the replies' prompts have none either.
      greeting ? { type: 'model', response: [greeting] } : undefined,
      this.#language,
    );
    // One thread: nobody waits for it, and other sessions may be starting (their first frames).
    void this._generate(prefix, new AbortController().signal, () => false, { mostThreads: 1 }).catch(() => undefined);
  }
}

export class OfflineLLMStream extends llm.LLMStream {
  readonly #llm: OfflineLLM;

  constructor(
    model: OfflineLLM,
    options: { chatCtx: llm.ChatContext; toolCtx?: llm.ToolContextLike; connOptions: APIConnectOptions },
  ) {
    super(model, options);
    this.#llm = model;
  }

  /**
   * One reply, spoken as it comes and cut after the allowed sentences (tool-reply.ts). With
   * tools, the prompt is as without them (smallModelPrompt) with the tools' rule added to the
   * instructions; after a call the reply is words only, with the results in the visitor's turn
   * (withToolResults): continuing its own <tool_response> turn, the 0.5B model wrote another
   * call's JSON (2 of 2). A reply of no words is tried once more, then replaced
   * (fallback-replies.ts): a visitor's turn never meets silence.
   */
  protected async run(): Promise<void> {
    const functions = offlineFunctions(this.toolCtx);
    const language = this.#llm.language;
    const id = shortuuid('offline_');
    const put = (piece: string) => {
      if (!this.queue.closed) this.queue.put({ id, delta: { role: 'assistant', content: piece } });
    };
    const { history, pending } = this.#prompt(functions);
    if (pending) return this.#answerResults(id, history, readResults(pending));
    let tokens = 0;
    let calls: ReplyCall[] = [];
    let spoke = false;
    for (let attempt = 0; attempt < 2 && !spoke && calls.length === 0; attempt++) {
      const reply = new ToolReplyText(put, this.#llm.options.maxSentences, Boolean(functions));
      const generation = await this.#generate(history, reply, { functions, retry: attempt > 0 });
      tokens += generation.tokens;
      // Interrupted by the session, or a newer turn took the model: that one answers.
      if (this.queue.closed || generation.superseded || this.abortController.signal.aborted) return;
      calls = reply.finish(generation.response, Object.keys(functions ?? {}));
      spoke = reply.spokeWords;
    }
    // An argument only a description's example gave: nothing is called, the visitor is asked.
    if (calls.some((call) => this.#copiedFromExample(call))) {
      calls = [];
      put(TELL_ME_MORE[language]);
      spoke = true;
    }
    if (!spoke && calls.length === 0) put(REPEAT_PLEASE[language]);
    if (calls.length > 0) {
      const toolCalls = calls.map((call) =>
        llm.FunctionCall.create({
          callId: shortuuid('call_'),
          name: call.name,
          args: JSON.stringify(call.params ?? {}),
        }),
      );
      this.queue.put({ id, delta: { role: 'assistant', toolCalls } });
    }
    this.queue.put({
      id,
      usage: { completionTokens: tokens, promptTokens: 0, promptCachedTokens: 0, totalTokens: tokens },
    });
  }

  /**
   * The reply after calls: written whole and checked before a word of it is spoken
   * (result-replies.ts), the results read out instead when it misstates them; a failed call's
   * is a fixed sentence, with no generation.
   */
  async #answerResults(id: string, history: LlamaHistoryItem[], results: ReadResult[]): Promise<void> {
    const language = this.#llm.language;
    const put = (text: string) => {
      if (!this.queue.closed) this.queue.put({ id, delta: { role: 'assistant', content: text } });
    };
    const fixed = fixedReplyTo(results, language);
    let tokens = 0;
    if (fixed) put(fixed);
    else {
      let written = '';
      const reply = new ToolReplyText((piece) => (written += piece), this.#llm.options.maxSentences, false);
      const generation = await this.#generate(history, reply, {});
      tokens = generation.tokens;
      if (this.queue.closed || generation.superseded || this.abortController.signal.aborted) return;
      reply.finish(generation.response, []);
      put(replyToResults(written, results, language));
    }
    this.queue.put({
      id,
      usage: { completionTokens: tokens, promptTokens: 0, promptCachedTokens: 0, totalTokens: tokens },
    });
  }

  async #generate(
    history: LlamaHistoryItem[],
    reply: ToolReplyText,
    options: { functions?: LlamaFunctions; retry?: boolean },
  ): Promise<Generation> {
    try {
      return await this.#llm._generate(history, this.abortController.signal, (chunk) => reply.add(chunk), options);
    } catch (error) {
      throw new APIConnectionError({
        message: `offline LLM failed: ${(error as Error).message}`,
        options: { retryable: false },
      });
    }
  }

  #copiedFromExample(call: ReplyCall): boolean {
    const tool = (this.toolCtx as llm.ToolContext | undefined)?.functionTools[call.name];
    if (!tool) return false;
    const visitorSaid = this.chatCtx.items
      .flatMap((item) => (item.type === 'message' && item.role === 'user' ? [item.textContent ?? ''] : []))
      .join(' ');
    return exampleCopied(call, { description: tool.description, parameters: tool.parameters }, visitorSaid) !== null;
  }

  /** The model's prompt, and the calls whose results it answers (after a call). */
  #prompt(functions: LlamaFunctions | undefined): { history: LlamaHistoryItem[]; pending?: LlamaModelTurn } {
    const language = this.#llm.language;
    const quoted = quotedDataOf(this.chatCtx);
    if (!functions)
      return { history: withQuotedData(smallModelPrompt(toLlamaHistory(this.chatCtx), language), quoted) };
    const full = toLlamaHistory(this.chatCtx, { tools: true });
    const last = full.at(-1);
    if (isToolTurn(last))
      return {
        history: withQuotedData(withToolResults(smallModelPrompt(full.slice(0, -1), language), last), quoted),
        pending: last,
      };
    const prompt = smallModelPrompt(full, language, { example: false, greeting: false }).map((item, index) =>
      index === 0 && item.type === 'system' ? { type: 'system' as const, text: `${item.text}\n\n${TOOLS_RULE}` } : item,
    );
    return { history: withQuotedData(prompt, quoted) };
  }
}

/** The results the model reads in a turn of calls, each with what it says of its call. */
function readResults(turn: LlamaModelTurn): ReadResult[] {
  return turn.response.flatMap((part) => {
    if (typeof part === 'string') return [];
    const text = String(part.result ?? '');
    return [{ kind: toolResultKind(text), text }];
  });
}
