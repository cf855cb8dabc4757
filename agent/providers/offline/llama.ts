// node-llama-cpp is installed by the bootstrap into the models folder, not into node_modules
// (src/bootstrap/models.mjs says why), so it is imported from there at run time. These are
// the few parts of its API (3.22) used here.

export type LlamaHistoryItem = { type: 'system'; text: string } | { type: 'user'; text: string } | LlamaModelTurn;

/** A function the model made and what it returned, in a model turn (the chat wrapper renders Qwen's <tool_call>). */
export interface LlamaFunctionCall {
  type: 'functionCall';
  name: string;
  params: unknown;
  /** Absent while the call has no result yet. */
  result?: unknown;
}

/** A model turn: its text, and with tools the functions it called (the no-tools path never has one). */
export interface LlamaModelTurn {
  type: 'model';
  response: (string | LlamaFunctionCall)[];
}

/** `functions` of generateResponse: what the model may call, each with a GBNF-able JSON schema. */
export type LlamaFunctions = Record<string, { description?: string; params?: Record<string, unknown> }>;

export interface LlamaGenerateOptions {
  onTextChunk?: (text: string) => void;
  signal?: AbortSignal;
  stopOnAbortSignal?: boolean;
  maxTokens?: number;
  temperature?: number;
  topK?: number;
  topP?: number;
  seed?: number;
  repeatPenalty?: false | { penalty?: number };
  /** Only text the grammar accepts is sampled. Not with `functions`. */
  grammar?: LlamaGrammar;
  /** Functions the model may call in the chat wrapper's format; the call's params follow their schema. */
  functions?: LlamaFunctions;
  documentFunctionParams?: boolean;
  maxParallelFunctionCalls?: number;
  /** With `functions`: each piece of a call's parameters as the model writes them. */
  onFunctionCallParamsChunk?: (chunk: unknown) => void;
}

/** A compiled GBNF grammar (opaque here). */
export interface LlamaGrammar {
  readonly grammar: string;
}

export interface LlamaChatResponse {
  response: string;
  /** With `functions`: the calls the model made (the generation stops at them). */
  functionCalls?: { functionName: string; params: unknown }[];
  metadata: { stopReason: string };
}

export interface LlamaChat {
  generateResponse(history: LlamaHistoryItem[], options?: LlamaGenerateOptions): Promise<LlamaChatResponse>;
  /** The prompt tokens evaluated so far (those reused from the sequence's cache are not). */
  readonly sequence?: { readonly tokenMeter: { readonly usedInputTokens: number } };
  dispose(): Promise<void> | void;
}

export type LlamaToken = number;

/** One input token of `controlledEvaluate`, optionally asking for the next token's distribution. */
export type LlamaControlledInput = LlamaToken | [LlamaToken, { generateNext: { probabilities: true } }];

export interface LlamaContextSequence {
  readonly contextTokens: readonly unknown[];
  clearHistory(): Promise<void>;
  controlledEvaluate(
    input: LlamaControlledInput[],
  ): Promise<Array<undefined | { next?: { probabilities?: Map<LlamaToken, number> } }>>;
}

export interface LlamaContext {
  getSequence(): LlamaContextSequence;
  /** The threads the last evaluation used. */
  readonly currentThreads: number;
  dispose(): Promise<void>;
}

export interface LlamaModel {
  /** `threads.ideal` is used when the Llama's `maxThreads` allows it, never fewer than `min`. */
  createContext(options: {
    contextSize?: number;
    threads?: number | { ideal: number; min: number };
    sequences?: number;
  }): Promise<LlamaContext>;
  /** `specialTokens`: read "<|im_start|>" and the like as the template's tokens, not text. */
  tokenize(text: string, specialTokens?: boolean): LlamaToken[];
  dispose(): Promise<void>;
}

export interface Llama {
  /** The most threads this instance's evaluations use together; read before each evaluation. */
  maxThreads: number;
  loadModel(options: { modelPath: string }): Promise<LlamaModel>;
  createGrammar(options: { grammar: string }): Promise<LlamaGrammar>;
  /** A grammar of the JSON a schema allows (json-grammar.ts makes the schema fit its generator). */
  createGrammarForJsonSchema(schema: Record<string, unknown>): Promise<LlamaGrammar>;
  dispose(): Promise<void>;
}

export interface NodeLlamaCpp {
  getLlama(options: { gpu: false; build: 'never'; logLevel?: string; progressLogs?: boolean }): Promise<Llama>;
  LlamaChat: new (options: { contextSequence: LlamaContextSequence }) => LlamaChat;
  LlamaLogLevel: Record<'error' | 'warn' | 'info' | 'debug', string>;
}

export async function importNodeLlamaCpp(entry: string): Promise<NodeLlamaCpp> {
  return (await import(entry)) as NodeLlamaCpp;
}
