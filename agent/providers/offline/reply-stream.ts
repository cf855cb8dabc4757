// One offline reply as an agents LLMStream (OfflineLLM.chat): the prompt the small model is shown
// (prompt.ts), its words spoken as they come, a call it writes read back as agents'
// FunctionCalls (tool-calls.ts, tool-reply.ts) with the filler said as it begins, and the
// answer after the calls' results (written as they came in, answer-ahead.ts) checked before it
// is spoken (result-replies.ts).
import { APIConnectionError, type APIConnectOptions, llm, shortuuid } from '@livekit/agents';
import type { SpokenLanguage } from '../../../src/contract/index.ts';
import { TOOL_FILLERS } from '../../conversation/tools.ts';
import { settledNow, writeAnswer } from './answer-ahead.ts';
import { REPEAT_PLEASE } from './fallback-replies.ts';
import type { Generation, GenerationOptions, ReplyModel, WrittenAnswer } from './generation.ts';
import type { LlamaFunctions, LlamaHistoryItem, LlamaModelTurn } from './llama.ts';
import { quotedDataOf, smallModelPrompt, toLlamaHistory, withQuotedData, withToolsRule } from './prompt.ts';
import { fixedReplyTo, type ReadResult, replyToResults, resultsOf, TELL_ME_MORE } from './result-replies.ts';
import { exampleCopied, isToolTurn, offlineFunctions, withToolResults } from './tool-calls.ts';
import { type ReplyCall, ToolReplyText } from './tool-reply.ts';

export class OfflineLLMStream extends llm.LLMStream {
  readonly #llm: ReplyModel;

  constructor(
    model: llm.LLM & ReplyModel,
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
    const { history, pending, answerPrompt } = this.#prompt(functions);
    if (pending) return this.#answerResults(id, history, resultsOf(pending));
    let tokens = 0;
    let calls: ReplyCall[] = [];
    let spoke = false;
    // A call is being written: the filler is said now, while the call, its result and the
    // answer follow (seconds offline), not a silence the visitor waits through. It ends its line:
    // agents' markdown filter holds a trailing space until more text comes (none does until the
    // call is written), and the voice's chunker sends a sentence's end followed by nothing at once.
    let filled = false;
    const onCallBegun = () => {
      if (filled) return;
      filled = true;
      put(`${TOOL_FILLERS[language]}\n`);
    };
    // A reply that reads one of these out says it at once (tool-reply.ts).
    const quotedLines = quotedDataOf(this.chatCtx).split('\n');
    for (let attempt = 0; attempt < 2 && !spoke && calls.length === 0; attempt++) {
      const reply = new ToolReplyText(
        put,
        this.#llm.options.maxSentences,
        Boolean(functions),
        onCallBegun,
        quotedLines,
      );
      const generation = await this.#generate(history, reply, { functions, retry: attempt > 0, onCallBegun });
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
      this.#llm.answersAhead?.expect(toolCalls, answerPrompt);
      this.queue.put({ id, delta: { role: 'assistant', toolCalls } });
    }
    this.queue.put({
      id,
      usage: { completionTokens: tokens, promptTokens: 0, promptCachedTokens: 0, totalTokens: tokens },
    });
  }

  /**
   * The reply after calls: written whole (as the results came in, when they did:
   * answer-ahead.ts) and checked before a word of it is spoken (result-replies.ts), the results
   * read out instead when it misstates them or is not written yet; a failed call's is a fixed
   * sentence, with no generation.
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
      // Written as the results came in (answer-ahead.ts): said if it is done; still being
      // written, the results are read out now instead of after it. Not written ahead: now.
      const ahead = this.#llm.answersAhead?.take(history);
      let answer = ahead && (await settledNow(ahead.answer));
      if (ahead && answer === undefined) {
        ahead.stop();
        answer = { written: '', tokens: 0, superseded: false };
      }
      if (!answer || answer.superseded) answer = await this.#writeAnswer(history);
      tokens = answer.tokens;
      if (this.queue.closed || answer.superseded || this.abortController.signal.aborted) return;
      put(replyToResults(answer.written, results, language));
    }
    this.queue.put({
      id,
      usage: { completionTokens: tokens, promptTokens: 0, promptCachedTokens: 0, totalTokens: tokens },
    });
  }

  #generate(
    history: LlamaHistoryItem[],
    reply: ToolReplyText,
    options: Pick<GenerationOptions, 'functions' | 'retry' | 'onCallBegun'>,
  ): Promise<Generation> {
    return failsAsConnection(
      this.#llm._generate(history, this.abortController.signal, (chunk) => reply.add(chunk), options),
    );
  }

  #writeAnswer(history: LlamaHistoryItem[]): Promise<WrittenAnswer> {
    return failsAsConnection(writeAnswer(this.#llm, history, this.abortController.signal));
  }

  #copiedFromExample(call: ReplyCall): boolean {
    const tool = (this.toolCtx as llm.ToolContext | undefined)?.functionTools[call.name];
    if (!tool) return false;
    const visitorSaid = this.chatCtx.items
      .flatMap((item) => (item.type === 'message' && item.role === 'user' ? [item.textContent ?? ''] : []))
      .join(' ');
    return exampleCopied(call, { description: tool.description, parameters: tool.parameters }, visitorSaid) !== null;
  }

  /**
   * The model's prompt; after a call, the calls whose results it answers; before one, what the
   * answer's prompt will be once they have them.
   */
  #prompt(functions: LlamaFunctions | undefined): {
    history: LlamaHistoryItem[];
    pending?: LlamaModelTurn;
    answerPrompt: (turn: LlamaModelTurn) => LlamaHistoryItem[];
  } {
    const language = this.#llm.language;
    const quoted = quotedDataOf(this.chatCtx);
    if (!functions)
      return {
        history: withQuotedData(smallModelPrompt(toLlamaHistory(this.chatCtx), language), quoted),
        answerPrompt: () => [],
      };
    const full = toLlamaHistory(this.chatCtx, { tools: true });
    const last = full.at(-1);
    if (isToolTurn(last)) {
      const before = full.slice(0, -1);
      return {
        history: answerPromptOf(before, last, language, quoted),
        pending: last,
        answerPrompt: (turn) => answerPromptOf(before, turn, language, quoted),
      };
    }
    const prompt = withToolsRule(smallModelPrompt(full, language, { example: false, greeting: false }));
    return {
      history: withQuotedData(prompt, quoted),
      answerPrompt: (turn) => answerPromptOf(full, turn, language, quoted),
    };
  }
}

/** The prompt of the answer after a turn of calls: the conversation before it, the results in the visitor's turn. */
function answerPromptOf(
  before: LlamaHistoryItem[],
  turn: LlamaModelTurn,
  language: SpokenLanguage,
  quoted: string,
): LlamaHistoryItem[] {
  return withQuotedData(withToolResults(smallModelPrompt(before, language), turn), quoted);
}

/** A failure of the model, as agents' stream reports one (not retried: the next turn is). */
async function failsAsConnection<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw new APIConnectionError({
      message: `offline LLM failed: ${(error as Error).message}`,
      options: { retryable: false },
    });
  }
}
