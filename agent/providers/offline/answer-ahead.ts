// The answer after a tool's result, written as soon as the result is in (issue 45 point 2).
// agents asks for that answer once the filler ("Let me check.") has been heard and the calls are
// done, though a customer's webhook answers in tens of milliseconds. So the reply that made the
// calls says what their answer's prompt will be, the job passes each result on as it comes
// (agents-adapter onToolOutput), and once every call has one the answer is written at once.
// When agents asks, the answer stream takes it if its prompt is the same one: written by then,
// it is said (once checked against the results); still being written, it is stopped and the
// results are read out at once (result-replies.ts): the visitor never waits in silence for the
// model's phrasing. Anything else (a newer turn, another result) and the stream writes its own.
import type { llm } from '@livekit/agents';
import type { AnswerInProgress, AnswersAhead, ReplyModel, WrittenAnswer } from './generation.ts';
import type { LlamaFunctionCall, LlamaHistoryItem, LlamaModelTurn } from './llama.ts';
import { fixedReplyTo, resultsOf } from './result-replies.ts';
import { llamaFunctionCall, setFunctionResult } from './tool-calls.ts';
import { ToolReplyText } from './tool-reply.ts';

/** Writes the answer to `history` whole (not spoken as it comes: it is checked first). */
export async function writeAnswer(
  model: ReplyModel,
  history: LlamaHistoryItem[],
  signal: AbortSignal,
): Promise<WrittenAnswer> {
  let written = '';
  const reply = new ToolReplyText((piece) => (written += piece), model.options.maxSentences, false);
  const generation = await model._generate(history, signal, (chunk) => reply.add(chunk));
  reply.finish(generation.response, []);
  return { written, tokens: generation.tokens, superseded: generation.superseded };
}

/** What a reply that made calls leaves for their answer. */
interface Expected {
  calls: Map<string, LlamaFunctionCall>;
  /** The answer's prompt once the calls have their results (the answer stream's own). */
  prompt(turn: LlamaModelTurn): LlamaHistoryItem[];
}

export class AnswerAhead implements AnswersAhead {
  #expected: Expected | null = null;
  #ahead: (AnswerInProgress & { key: string }) | null = null;

  constructor(private readonly model: ReplyModel) {}

  expect(calls: llm.FunctionCall[], prompt: Expected['prompt']): void {
    this.#expected = { calls: new Map(calls.map((call) => [call.callId, llamaFunctionCall(call)])), prompt };
    this.#ahead?.stop(); // an answer nobody asked for
    this.#ahead = null;
  }

  /** A call's result came in: the last one the reply waits for starts the answer's writing. */
  resultIn(output: llm.FunctionCallOutput): void {
    const expected = this.#expected;
    if (!expected || !setFunctionResult(expected.calls, output)) return;
    const calls = [...expected.calls.values()];
    if (calls.some((call) => call.result === undefined)) return;
    this.#expected = null;
    const turn: LlamaModelTurn = { type: 'model', response: calls };
    // A failed call is answered by a fixed sentence: nothing to write.
    if (fixedReplyTo(resultsOf(turn), this.model.language)) return;
    const history = expected.prompt(turn);
    const stop = new AbortController();
    this.#ahead = {
      key: JSON.stringify(history),
      // Nobody awaits it until the answer is asked for; a failure then writes it anew.
      answer: writeAnswer(this.model, history, stop.signal).catch(() => null),
      stop: () => stop.abort(),
    };
  }

  take(history: LlamaHistoryItem[]): AnswerInProgress | undefined {
    const ahead = this.#ahead;
    this.#ahead = null;
    if (ahead && ahead.key === JSON.stringify(history)) return ahead;
    ahead?.stop(); // for another prompt: nobody will say it
    return undefined;
  }
}

/** What a promise has given if it has settled, else `undefined`, without waiting for it. */
export function settledNow<T>(promise: Promise<T>): Promise<T | undefined> {
  const pending = Symbol('pending');
  return Promise.race([promise, Promise.resolve(pending)]).then((value) =>
    value === pending ? undefined : (value as T),
  );
}
