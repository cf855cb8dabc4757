// One call of a webhook tool (docs/api.md#tools-calls): a signed POST (Standard Webhooks, the
// tool's secret) to the address its host resolves to now, if that may be called
// (src/webhooks/pinned-fetch.ts: no redirects, at most TOOL_RESULT_MAX_BYTES of the answer
// read), within the tool's timeout. Every way it can go becomes an outcome and a text the
// model can act on; nothing here throws.
import { Webhook } from 'standardwebhooks';
import packageJson from '../../package.json' with { type: 'json' };
import { TOOL_RESULT_MAX_BYTES, type ToolCallOutcome } from '../contract/agent-tools.ts';
import { newId } from '../db/ids.ts';
import { DestinationRefused, pinnedFetch, type Resolver } from '../webhooks/index.ts';
import type { ToolRow } from './presenter.ts';

/** How much of a non-2xx answer goes into the result. */
const ERROR_EXCERPT_CHARS = 1_000;

export interface WebhookCall {
  sessionId: string;
  identityId: string | null;
  callId: string;
  arguments: Record<string, unknown>;
}

export interface CallOptions {
  allowPrivate: boolean;
  resolve: Resolver;
}

export interface CallResult {
  outcome: Exclude<ToolCallOutcome, 'invalid_arguments'>;
  result: string;
  /** The receiver's HTTP status, when one came. */
  status?: number;
}

/** The JSON body the receiver gets. */
export function webhookCallBody(tool: ToolRow, call: WebhookCall): string {
  return JSON.stringify({
    session_id: call.sessionId,
    identity_id: call.identityId,
    call_id: call.callId,
    tool: tool.name,
    arguments: call.arguments,
  });
}

export async function callWebhookTool(tool: ToolRow, call: WebhookCall, options: CallOptions): Promise<CallResult> {
  const body = webhookCallBody(tool, call);
  // A fresh message id per call: a retry of the same call_id is a new delivery; `call_id` in the body tells them apart.
  const messageId = newId('msg');
  const at = new Date();
  const started = performance.now();
  try {
    const answer = await pinnedFetch(tool.url!, {
      method: 'POST',
      timeoutMs: tool.timeoutMs,
      allowPrivate: options.allowPrivate,
      resolve: options.resolve,
      maxAnswerBytes: TOOL_RESULT_MAX_BYTES,
      headers: {
        'content-type': 'application/json',
        'user-agent': `Likeness-Tools/${packageJson.version}`,
        'webhook-id': messageId,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(tool.secret!).sign(messageId, at, body),
      },
      body,
    });
    // A body that broke off at the deadline: the answer never came whole.
    if (answer.truncated && performance.now() - started >= tool.timeoutMs)
      return { outcome: 'timeout', result: noAnswer(tool), status: answer.status };
    // U+0000 is no text to a model, and the transcript keeps an excerpt that Postgres could not store.
    const text = answer.body.replaceAll('\u0000', '\uFFFD');
    if (!answer.ok) {
      const excerpt = text.trim().slice(0, ERROR_EXCERPT_CHARS);
      const redirect = answer.status >= 300 && answer.status < 400 ? ' (a redirect, which is not followed)' : '';
      return {
        outcome: 'error',
        result: `the tool answered ${answer.status}${redirect}${excerpt ? `: ${excerpt}` : ''}`,
        status: answer.status,
      };
    }
    const cut = answer.truncated
      ? `\n[the answer was cut: only its first ${TOOL_RESULT_MAX_BYTES} bytes were read]`
      : '';
    return { outcome: 'ok', result: `${text}${cut}`, status: answer.status };
  } catch (error) {
    if (error instanceof DestinationRefused)
      return { outcome: 'error', result: `the tool's address was refused: ${error.message}` };
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
      return { outcome: 'timeout', result: noAnswer(tool) };
    return {
      outcome: 'error',
      result: `the tool could not be reached: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

const noAnswer = (tool: ToolRow) => `the tool did not answer within ${tool.timeoutMs} ms`;
