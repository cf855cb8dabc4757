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
import type {
  LlamaChat,
  LlamaChatResponse,
  LlamaFunctionCall,
  LlamaFunctions,
  LlamaGrammar,
  LlamaHistoryItem,
} from './llama.ts';
import {
  isToolTurn,
  llamaFunctionCall,
  offlineFunctions,
  setFunctionResult,
  TOOLS_RULE,
  withToolResults,
} from './tool-calls.ts';
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

/**
 * The chat context as a llama chat history: text only (no vision), roles merged. Instructions
 * go first, merged; but instructions that come after the conversation's last turn are a reply's
 * own (a `context` order with `respond`: agent/conversation/orders.ts) and stay last, for
 * smallModelPrompt to ask with. With `tools`, function calls and their results join the model's
 * turns (tool-calls.ts); without, they are left out (a session without tools has none).
 */
export function toLlamaHistory(chatCtx: llm.ChatContext, { tools = false } = {}): LlamaHistoryItem[] {
  const system: string[] = [];
  const turns: LlamaHistoryItem[] = [];
  let trailing: string[] = [];
  const calls = new Map<string, LlamaFunctionCall>();
  for (const item of chatCtx.items) {
    if (tools && item.type === 'function_call') {
      system.push(...trailing);
      trailing = [];
      const call = llamaFunctionCall(item);
      calls.set(item.callId, call);
      const last = turns.at(-1);
      if (last?.type === 'model') last.response.push(call);
      else turns.push({ type: 'model', response: [call] });
      continue;
    }
    if (tools && item.type === 'function_call_output') {
      setFunctionResult(calls, item);
      continue;
    }
    if (item.type !== 'message') continue; // handoffs, and tool calls when the chat has no tools
    const text = item.content
      .filter((part): part is string => typeof part === 'string')
      .join('\n')
      .trim();
    if (!text) continue; // e.g. a user turn that was only a camera image
    if (item.role === 'system' || item.role === 'developer') {
      // Instructions may arrive late: the model reads one system message first.
      if (turns.length > 0) trailing.push(text);
      else system.push(text);
      continue;
    }
    system.push(...trailing);
    trailing = [];
    const last = turns.at(-1);
    if (item.role === 'user') {
      if (last?.type === 'user') last.text += `\n${text}`;
      else turns.push({ type: 'user', text });
    } else {
      if (last?.type === 'model' && typeof last.response.at(-1) === 'string')
        last.response[last.response.length - 1] += ` ${text}`;
      else if (last?.type === 'model') last.response.push(text);
      else turns.push({ type: 'model', response: [text] });
    }
  }
  return [
    ...(system.length ? [{ type: 'system' as const, text: system.join('\n\n') }] : []),
    ...turns,
    ...(trailing.length ? [{ type: 'system' as const, text: trailing.join('\n\n') }] : []),
  ];
}

/**
 * One exchange in the reply's language, shown before the conversation: SmolLM2-135M answered
 * "What is the capital of Italy?" in Italian and drifted into French or Spanish in English
 * sessions; one plain example of a short answer in the pinned language keeps it there
 * (bench/conversation/eval, text only: English right answers 19 → 28 of 34, replies in
 * another language 10 → 0).
 */
const LANGUAGE_EXAMPLES: Record<SpokenLanguage, [question: string, answer: string]> = {
  en: ['What is two plus two?', 'Two plus two is four.'],
  es: ['¿Cuánto es dos más dos?', 'Dos más dos son cuatro.'],
  pl: ['Ile to jest dwa plus dwa?', 'Dwa plus dwa to cztery.'],
  uk: ['Скільки буде два плюс два?', 'Два плюс два — чотири.'],
};
/** A visitor's turn this short is a follow-up ("Sorry, at what time?"): it needs the exchange before it. */
const FOLLOW_UP_MAX_WORDS = 4;
/**
 * The visitor's turn a reply nobody asked for is prompted with (a `context` order's `respond`,
 * agent/conversation/orders.ts): the model answers a user turn (after a reply of its own it
 * would only lengthen that one), and asked for news it tells what it was just given ("Go on."
 * got "Sure, go on.").
 */
const ANY_NEWS: Record<SpokenLanguage, string> = {
  en: 'Any news for me?',
  es: '¿Alguna novedad para mí?',
  pl: 'Masz dla mnie jakieś nowości?',
  uk: 'Є для мене якісь новини?',
};

/**
 * What the offline model is shown for a reply: the instructions, the language example, the greeting,
 * the visitor's last turn, and the exchange before it only for a follow-up. Older turns go:
 * the 135M model copied its own earlier replies ("The Capital de Earth es la Capital de
 * Earth." to every question after a few turns); with the last exchange kept for every
 * question, 23 of 34 were right against 28 without.
 */
export function smallModelPrompt(
  history: LlamaHistoryItem[],
  language: SpokenLanguage,
  { example = true, greeting: withGreeting = true } = {},
): LlamaHistoryItem[] {
  const system = history[0]?.type === 'system' ? history[0] : undefined;
  const tail = history.at(-1);
  // A reply's own instructions, after the last turn (toLlamaHistory).
  const own = history.length > 1 && tail?.type === 'system' ? tail.text : undefined;
  const turns = history.slice(system ? 1 : 0, own === undefined ? undefined : -1);
  const last = turns.at(-1);
  const greeting = turns[0]?.type === 'model' ? turns[0] : undefined;
  const afterGreeting = turns.slice(greeting ? 1 : 0);
  // The last turn is a reply (not the greeting alone): the next is one nobody asked for. Asked
  // in the visitor's turn, the 0.5B model carries out what it is told (told the same as a system
  // message after its reply, it told 1 of 4 pieces of news; as the visitor's turn, 4 of 4).
  if (last?.type === 'model' && (afterGreeting.length > 0 || own !== undefined))
    return [
      ...promptStart(system, withGreeting ? greeting : undefined, language, example),
      ...afterGreeting.slice(-2),
      { type: 'user', text: own ?? ANY_NEWS[language] },
    ];
  if (own !== undefined) {
    // Told something for the reply to a question: read with the instructions.
    const merged = { type: 'system' as const, text: [system?.text, own].filter(Boolean).join('\n\n') };
    return smallModelPrompt([merged, ...turns], language, { example, greeting: withGreeting });
  }
  if (last?.type !== 'user') return history;
  const earlier = afterGreeting.slice(0, -1);
  const followUp = last.text.split(/\s+/).length <= FOLLOW_UP_MAX_WORDS ? earlier.slice(-2) : [];
  return [...promptStart(system, withGreeting ? greeting : undefined, language, example), ...followUp, last];
}

/**
 * What every reply's prompt starts with: the instructions, the language example, the greeting.
 * Neither example nor greeting with tools: after any turn of its own in words the 0.5B model
 * answered "Is my appointment on Tuesday still on?" with a made-up "Yes" instead of calling
 * (with the example 0 of 2 questions for a tool called, with the greeting 0 of 2; without
 * either 2 of 2, and no call for small talk or a general question).
 */
function promptStart(
  system: LlamaHistoryItem | undefined,
  greeting: LlamaHistoryItem | undefined,
  language: SpokenLanguage,
  example = true,
): LlamaHistoryItem[] {
  const [question, answer] = LANGUAGE_EXAMPLES[language];
  return [
    ...(system ? [system] : []),
    ...(example
      ? [
          { type: 'user' as const, text: question },
          { type: 'model' as const, response: [answer] },
        ]
      : []),
    ...(greeting ? [greeting] : []),
  ];
}

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
}

export class OfflineLLM extends llm.LLM {
  readonly #chat: LlamaChat;
  readonly #name: string;
  readonly #threads: ReplyThreads | undefined;
  readonly #options: OfflineLLMOptions;
  /** Per language, the letters a reply may use (alphabets.ts); none: unconstrained. */
  readonly #alphabets: Partial<Record<SpokenLanguage, LlamaGrammar>>;
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
      maxTokens: this.#options.maxTokens,
      temperature: this.#options.temperature,
      seed: this.#options.seed,
      topK: 40,
      topP: 0.9,
      // A repeat penalty also covers the prompt's tokens: SmolLM2 then avoids the very facts
      // the instructions give it (measured: 0 of 8 replies used them, 8 of 8 without).
      repeatPenalty: false,
      // The reply keeps to the letters of the language it is in (alphabets.ts).
      ...(functions
        ? { functions, documentFunctionParams: true, maxParallelFunctionCalls: 1 }
        : { grammar: this.#alphabets[this.#language] }),
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
   * stops it, as any newer generation does.
   */
  prime(instructions: string, greeting: string): void {
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
    const history = smallModelPrompt(toLlamaHistory(this.chatCtx), this.#llm.language);
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
    const history: LlamaHistoryItem[] = pending
      ? withToolResults(smallModelPrompt(full.slice(0, -1), this.#llm.language), pending)
      : smallModelPrompt(full, this.#llm.language, { example: false, greeting: false }).map((item, index) =>
          index === 0 && item.type === 'system'
            ? { type: 'system' as const, text: `${item.text}\n\n${TOOLS_RULE}` }
            : item,
        );
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
