// One question to a session's language model after its conversation (the summary, the outcome):
// its whole answer as text, bounded in time. The stream ends quietly on a failure and tells the
// model's listeners why; one is needed anyway, since an EventEmitter throws an `error` nobody
// listens to.
import { llm } from '@livekit/agents';

export interface ModelAnswer {
  text: string;
  timedOut: boolean;
  failure?: Error;
}

/** Asks `model` one user message and reads its answer whole, stopped at `timeoutMs`. */
export async function askModel(
  model: llm.LLM,
  question: string,
  timeoutMs: number,
  extraKwargs?: Record<string, unknown>,
): Promise<ModelAnswer> {
  const chatCtx = llm.ChatContext.empty();
  chatCtx.addMessage({ role: 'user', content: question });
  let failure: Error | undefined;
  const onError = (event: { error: Error; recoverable: boolean }) => {
    if (!event.recoverable) failure = event.error;
  };
  model.on('error', onError);
  const stream = model.chat({
    chatCtx,
    connOptions: { maxRetry: 1, retryIntervalMs: 1_000, timeoutMs: Math.min(timeoutMs, 20_000) },
    ...(extraKwargs && { extraKwargs }),
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stream.close();
  }, timeoutMs);
  let text = '';
  try {
    for await (const chunk of stream) text += chunk.delta?.content ?? '';
  } catch (error) {
    failure = error as Error;
  } finally {
    clearTimeout(timer);
    model.off('error', onError);
  }
  return { text, timedOut, failure };
}

/** The JSON an answer holds; undefined when it timed out, failed or does not parse. */
export function answerJson(answer: ModelAnswer): unknown {
  if (answer.timedOut || answer.failure) return undefined;
  try {
    return JSON.parse(answer.text);
  } catch {
    return undefined;
  }
}

/** Why an answer read as JSON gave nothing usable: `wrongShape` when the model wrote something else. */
export function unusableAnswerDetail(answer: ModelAnswer, timeoutMs: number, wrongShape: string): string {
  return answer.text && !answer.timedOut && !answer.failure ? wrongShape : missingAnswerDetail(answer, timeoutMs);
}

/** Why an answer is missing, in words for the session's detail. */
export function missingAnswerDetail(answer: ModelAnswer, timeoutMs: number): string {
  return answer.timedOut
    ? `the language model did not answer within ${Math.round(timeoutMs / 1000)} s`
    : answer.failure
      ? `the language model failed: ${answer.failure.message}`.slice(0, 500)
      : 'the language model wrote nothing';
}
