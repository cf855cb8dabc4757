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
import type { ModelAnswer } from '../model-answer.ts';
import { grammarSchema } from './json-grammar.ts';
import type { LlamaChat, LlamaChatResponse, LlamaFunctions, LlamaGrammar, LlamaHistoryItem } from './llama.ts';
import { promptStart, quotedDataOf, smallModelPrompt, toLlamaHistory, withQuotedData } from './prompt.ts';
import { isToolTurn, offlineFunctions, TOOLS_RULE, withToolResults } from './tool-calls.ts';
import { ToolReplyText } from './tool-reply.ts';

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

/** A sentence ends at . ! or ? (closing quotes allowed) followed by whitespace. */
const SENTENCE_END = /[.!?]+["')\]]*\s/g;

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
  #running: { stop: AbortController; done: Promise<unknown> } | null = null;

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

  /**
   * Runs one generation on the shared sequence, after stopping the one before. With
   * `functions` the model may call them (no alphabet grammar then: node-llama-cpp takes one or
   * the other); `response` holds its calls.
   */
  async _generate(
    history: LlamaHistoryItem[],
    signal: AbortSignal,
    onText: (text: string) => boolean,
    mostThreads?: number,
    functions?: LlamaFunctions,
  ): Promise<number> {
    return (await this._generateResponse(history, signal, onText, mostThreads, functions)).tokens;
  }

  async _generateResponse(
    history: LlamaHistoryItem[],
    signal: AbortSignal,
    onText: (text: string) => boolean,
    mostThreads?: number,
    functions?: LlamaFunctions,
    limits?: GenerationLimits,
  ): Promise<{ tokens: number; response: LlamaChatResponse | null }> {
    const previous = this.#running;
    if (previous) {
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
      temperature: limits ? 0 : this.#options.temperature,
      seed: this.#options.seed,
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
    const running = { stop, done };
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
    return { tokens, response };
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
      const { response } = await this._generateResponse(
        history,
        stop.signal,
        (chunk) => {
          text += chunk;
          return true;
        },
        undefined,
        undefined,
        { grammar, maxTokens: JSON_MAX_TOKENS },
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
    void this._generate(prefix, new AbortController().signal, () => false, 1).catch(() => undefined);
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

  protected async run(): Promise<void> {
    const functions = offlineFunctions(this.toolCtx);
    if (functions) return this.#runWithTools(functions);
    const id = shortuuid('offline_');
    const history = withQuotedData(
      smallModelPrompt(toLlamaHistory(this.chatCtx), this.#llm.language),
      quotedDataOf(this.chatCtx),
    );
    const { maxSentences } = this.#llm.options;
    let text = '';
    let sentences = 0;
    let completionTokens = 0;
    try {
      completionTokens = await this.#llm._generate(history, this.abortController.signal, (chunk) => {
        // Cut the chunk right after the last allowed sentence, so no word of the next one is spoken.
        const before = text.length;
        text += chunk;
        SENTENCE_END.lastIndex = Math.max(0, before - 4);
        let cut = -1;
        for (let match = SENTENCE_END.exec(text); match; match = SENTENCE_END.exec(text)) {
          if (match.index + match[0].length <= before) continue; // counted with an earlier chunk
          sentences++;
          if (sentences >= maxSentences) {
            cut = match.index + match[0].length - 1; // keep the punctuation, drop the space
            break;
          }
        }
        const piece = cut >= 0 ? text.slice(before, Math.max(before, cut)) : chunk;
        if (piece && !this.queue.closed) this.queue.put({ id, delta: { role: 'assistant', content: piece } });
        return cut < 0;
      });
    } catch (error) {
      throw new APIConnectionError({
        message: `offline LLM failed: ${(error as Error).message}`,
        options: { retryable: false },
      });
    }
    if (this.queue.closed) return; // closed by the session (an interruption)
    this.queue.put({
      id,
      usage: { completionTokens, promptTokens: 0, promptCachedTokens: 0, totalTokens: completionTokens },
    });
  }

  /**
   * A reply that may call the session's tools: the prompt as without them (smallModelPrompt),
   * the tools' rule added to the instructions. After a call, the reply is words only, with the
   * results in the visitor's turn (withToolResults): continuing its own <tool_response> turn,
   * the 0.5B model wrote another call's JSON (2 of 2). Text that may be a call written as JSON is
   * held back until it is known (tool-calls.ts); other text is spoken as it comes, cut after
   * the allowed sentences.
   */
  async #runWithTools(functions: LlamaFunctions): Promise<void> {
    const id = shortuuid('offline_');
    const full = toLlamaHistory(this.chatCtx, { tools: true });
    const last = full.at(-1);
    const pending = isToolTurn(last) ? last : undefined;
    const prompt: LlamaHistoryItem[] = pending
      ? withToolResults(smallModelPrompt(full.slice(0, -1), this.#llm.language), pending)
      : smallModelPrompt(full, this.#llm.language, { example: false, greeting: false }).map((item, index) =>
          index === 0 && item.type === 'system'
            ? { type: 'system' as const, text: `${item.text}\n\n${TOOLS_RULE}` }
            : item,
        );
    const history = withQuotedData(prompt, quotedDataOf(this.chatCtx));
    const reply = new ToolReplyText(
      (piece) => {
        if (!this.queue.closed) this.queue.put({ id, delta: { role: 'assistant', content: piece } });
      },
      this.#llm.options.maxSentences,
      !pending,
    );
    let result: { tokens: number; response: LlamaChatResponse | null };
    try {
      result = await this.#llm._generateResponse(
        history,
        this.abortController.signal,
        (chunk) => reply.add(chunk),
        undefined,
        // After a call's result: words only (a 0.5B model called the same function again).
        pending ? undefined : functions,
      );
    } catch (error) {
      throw new APIConnectionError({
        message: `offline LLM failed: ${(error as Error).message}`,
        options: { retryable: false },
      });
    }
    if (this.queue.closed) return;
    const calls = reply.finish(result.response, Object.keys(functions));
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
      usage: {
        completionTokens: result.tokens,
        promptTokens: 0,
        promptCachedTokens: 0,
        totalTokens: result.tokens,
      },
    });
  }
}
