// The tools the session's model may call (docs/api.md#tools), built from the dispatch's
// `tools`: each becomes an agents function tool whose execute checks the model's arguments
// against the tool's JSON Schema first (nothing is called with arguments that break it), then
// runs it: a webhook tool through the control plane (POST tool_calls_url, which signs and sends
// it), a client tool over LiveKit RPC to the visitor's app, end_session by saying goodbye and
// reporting `agent_ended`. Every outcome comes back to the model as text it can speak about
// (never an exception out of the conversation), and every call is told to `onCall` (the
// transcript's tool turn and the turn's metrics).
import { llm, type voice } from '@livekit/agents';
import { type LocalParticipant, RpcError } from '@livekit/rtc-node';
import { Value } from '@sinclair/typebox/value';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import {
  type DispatchTool,
  type SpokenLanguage,
  TOOL_RESULT_EXCERPT_CHARS,
  TOOL_RESULT_MAX_BYTES,
  ToolCallAnswer,
  type ToolCallOutcome,
  type ToolCallRecord,
  type ToolCallRequest,
} from '../../src/contract/index.ts';
import { HEARD_AFTER_PLAYED_MS } from '../agents-adapter/index.ts';
import type { AgentLogger } from '../logging.ts';

/** A call still running after this long gets a short spoken filler (once per turn). */
export const FILLER_AFTER_MS = 1_000;
/** The control plane's own wait on a webhook is the tool's timeout: this much more is its round trip. */
const CONTROL_PLANE_MARGIN_MS = 3_000;
/** The goodbye of end_session gets this long to be heard before the session is ended anyway. */
const GOODBYE_PLAYOUT_MAX_MS = 15_000;
/** Beyond the visitor's usual lag behind playout: a busier network, a browser's deeper buffer. */
const GOODBYE_HEARD_MARGIN_MS = 500;

/**
 * Short: the answer is not played before the filler has been (agents voices a tool's answer
 * once the words before its call are heard), and offline it is ready ~1 s after the call:
 * "One moment, let me check." (1.6 s of speech) held it back by a second (bench/conversation).
 */
export const TOOL_FILLERS: Record<SpokenLanguage, string> = {
  en: 'Let me check.',
  es: 'Déjame ver.',
  pl: 'Zaraz sprawdzę.',
  uk: 'Зараз перевірю.',
};

export const GOODBYES: Record<SpokenLanguage, string> = {
  en: 'Thank you for talking with me. Goodbye!',
  es: 'Gracias por hablar conmigo. ¡Adiós!',
  pl: 'Dziękuję za rozmowę. Do widzenia!',
  uk: 'Дякую за розмову. До побачення!',
};

export interface ToolsOptions {
  tools: readonly DispatchTool[];
  /** The dispatch's `tool_calls_url`; absent: webhook tools answer that they cannot be called. */
  toolCallsUrl?: string;
  reportToken: string;
  /** Who answers client tools, and through which participant the job asks. */
  visitorIdentity: string;
  participant: () => Pick<LocalParticipant, 'performRpc'> | undefined;
  /** The language the agent speaks now (the filler's and the goodbye's). */
  language(): SpokenLanguage;
  /** Each call, once it is over (the transcript's tool turn, the turn's metrics). */
  onCall(record: ToolCallRecord): void;
  /** After end_session's goodbye: report `agent_ended` (the control plane ends the session). */
  endSession(): Promise<void>;
  logger: Pick<AgentLogger, 'info' | 'warn'>;
  fetch?: typeof fetch;
  /** ms, monotonic. */
  now?: () => number;
  fillerAfterMs?: number;
}

interface Outcome {
  outcome: ToolCallOutcome;
  /** The receiver's answer, or what went wrong (kept in the transcript). */
  result: string;
}

const ajv = new Ajv({ allErrors: true, strict: false });

/** What the model reads back for each outcome: something it can say to the visitor. */
export function toolResultForModel(name: string, { outcome, result }: Outcome): string {
  switch (outcome) {
    case 'ok':
      return result || `${name} was done.`;
    case 'invalid_arguments':
      return `${name} was not called: ${result}. Ask the visitor for what is missing or wrong, or call it again with corrected arguments.`;
    case 'timeout':
      return `${name} did not answer in time; nothing is known about its result. Tell the visitor you could not check it right now, and do not guess.`;
    case 'error':
      return `${name} failed: ${result}. Tell the visitor you could not do it right now, and do not guess a result.`;
  }
}

/** What a text toolResultForModel wrote says of the call (the offline agent's reply after it: result-replies.ts). */
export function toolResultKind(text: string): 'ok' | 'done' | 'not_called' | 'failed' {
  if (/^\S+ was done\.$/.test(text)) return 'done';
  if (/^\S+ was not called: /.test(text)) return 'not_called';
  if (/^\S+ (?:did not answer in time; nothing is known|failed: )/.test(text)) return 'failed';
  return 'ok';
}

/** ajv's errors as one sentence for the model ("date: must be string; must have required property 'date'"). */
export function describeSchemaErrors(errors: readonly ErrorObject[] | null | undefined): string {
  const described = (errors ?? []).slice(0, 5).map((error) => {
    const at = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
    return at ? `${at} ${error.message}` : `the arguments ${error.message}`;
  });
  return described.join('; ') || 'the arguments do not match the tool';
}

function excerpt(text: string, chars = TOOL_RESULT_EXCERPT_CHARS): string {
  return text.length <= chars ? text : `${text.slice(0, chars - 1)}…`;
}

/** At most TOOL_RESULT_MAX_BYTES of a client's answer (cut on a character). */
function capBytes(text: string): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= TOOL_RESULT_MAX_BYTES) return text;
  return new TextDecoder().decode(bytes.slice(0, TOOL_RESULT_MAX_BYTES)).replace(/\uFFFD$/, '');
}

/** The session's function tools, by name; a tool whose schema does not compile is left out (and logged). */
export function conversationTools(options: ToolsOptions): Record<string, llm.FunctionTool> {
  const now = options.now ?? (() => performance.now());
  const fillerAfterMs = options.fillerAfterMs ?? FILLER_AFTER_MS;
  /** The speech (turn) ids a filler was said in: once per turn. */
  const filled = new Set<string>();
  const tools: Record<string, llm.FunctionTool> = {};
  for (const tool of options.tools) {
    let validate: ValidateFunction;
    try {
      validate = ajv.compile(tool.parameters);
    } catch (error) {
      options.logger.warn({ err: error, tool: tool.name }, "a tool's parameters do not compile; the tool is left out");
      continue;
    }
    tools[tool.name] = llm.tool({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters as never,
      execute: async (args: Record<string, unknown>, { ctx, toolCallId }) => {
        const started = now();
        const record = (outcome: Outcome) =>
          options.onCall({
            call_id: toolCallId.slice(0, 200),
            name: tool.name,
            arguments: args ?? {},
            result_excerpt: excerpt(outcome.result),
            duration_ms: Math.max(0, Math.round(now() - started)),
            outcome: outcome.outcome,
          });
        if (!validate(args ?? {})) {
          const outcome: Outcome = { outcome: 'invalid_arguments', result: describeSchemaErrors(validate.errors) };
          record(outcome);
          return toolResultForModel(tool.name, outcome);
        }
        if (tool.type === 'end_session') {
          record({ outcome: 'ok', result: 'The session ends.' });
          await sayGoodbye(ctx.session, options);
          await options.endSession();
          // Nothing returned: agents asks the model for no reply after it.
          return undefined;
        }
        const filler = fillerOnce(ctx, fillerAfterMs, filled, options);
        let outcome: Outcome;
        try {
          outcome =
            tool.type === 'webhook'
              ? await callWebhook(tool, toolCallId, args, options)
              : await callClient(tool, args, options);
        } catch (error) {
          options.logger.warn({ err: error, tool: tool.name }, 'a tool call failed');
          outcome = { outcome: 'error', result: 'it could not be called' };
        } finally {
          filler.cancel();
        }
        record(outcome);
        return toolResultForModel(tool.name, outcome);
      },
    }) as llm.FunctionTool;
  }
  return tools;
}

/**
 * Ends the session as its end_session tool does (goodbye, then `agent_ended`), for a farewell
 * told by a rule rather than the model (farewells.ts); the transcript shows the tool's call.
 */
export async function endOnFarewell(
  session: voice.AgentSession,
  tool: DispatchTool,
  options: Pick<ToolsOptions, 'language' | 'logger' | 'onCall' | 'endSession'>,
): Promise<void> {
  options.onCall({
    call_id: `farewell_${crypto.randomUUID()}`,
    name: tool.name,
    arguments: {},
    result_excerpt: 'The session ends.',
    duration_ms: 0,
    outcome: 'ok',
  });
  await sayGoodbye(session, options);
  await options.endSession();
}

/**
 * Says the filler once the call has run FILLER_AFTER_MS, once per turn, outside the chat
 * context; not where the turn already had words before its call (a model's own "let me check",
 * the offline model's filler, said as it began writing the call): they are playing, or done.
 */
function fillerOnce(
  ctx: llm.ToolOptions['ctx'],
  afterMs: number,
  filled: Set<string>,
  options: Pick<ToolsOptions, 'language' | 'logger'>,
): { cancel(): void } {
  const turn = ctx.speechHandle.id;
  const timer = setTimeout(() => {
    if (filled.has(turn)) return;
    filled.add(turn);
    const spoken = ctx.speechHandle.chatItems.some(
      (item) => item.type === 'message' && item.role === 'assistant' && Boolean(item.textContent?.trim()),
    );
    if (spoken || ctx.session.agentState === 'speaking') return;
    try {
      ctx.session.say(TOOL_FILLERS[options.language()], { addToChatCtx: false });
    } catch (error) {
      options.logger.info({ err: error }, 'the filler could not be said');
    }
  }, afterMs);
  return { cancel: () => clearTimeout(timer) };
}

async function sayGoodbye(session: voice.AgentSession, options: Pick<ToolsOptions, 'language' | 'logger'>) {
  try {
    const handle = session.say(GOODBYES[options.language()], { allowInterruptions: false });
    await Promise.race([handle.waitForPlayout(), Bun.sleep(GOODBYE_PLAYOUT_MAX_MS)]);
    // Played here is heard a moment later, and its last captions go out then: ended at once,
    // the room closed under the goodbye's last word and its caption.
    await Bun.sleep(HEARD_AFTER_PLAYED_MS + GOODBYE_HEARD_MARGIN_MS);
  } catch (error) {
    options.logger.info({ err: error }, 'the goodbye could not be said');
  }
}

/** A webhook tool: the control plane calls the receiver (signed) and answers how it went. */
async function callWebhook(
  tool: DispatchTool,
  callId: string,
  args: Record<string, unknown>,
  options: Pick<ToolsOptions, 'toolCallsUrl' | 'reportToken' | 'fetch'>,
): Promise<Outcome> {
  if (!options.toolCallsUrl) return { outcome: 'error', result: 'the service cannot call it in this session' };
  const request: ToolCallRequest = { call_id: callId.slice(0, 200), tool_id: tool.tool_id, arguments: args };
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(options.toolCallsUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.reportToken}` },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(tool.timeout_ms + CONTROL_PLANE_MARGIN_MS),
    });
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    return timedOut
      ? { outcome: 'timeout', result: 'no answer in time' }
      : { outcome: 'error', result: 'the service could not be reached' };
  }
  const body = await response.json().catch(() => null);
  if (!response.ok || !Value.Check(ToolCallAnswer, body))
    return { outcome: 'error', result: `the service refused the call (HTTP ${response.status})` };
  return { outcome: body.outcome, result: body.result };
}

/** What the model and the transcript are told of each RPC failure. */
function rpcFailure(error: unknown): Outcome {
  if (!(error instanceof RpcError)) return { outcome: 'error', result: "the visitor's app could not be asked" };
  switch (error.code) {
    case RpcError.ErrorCode.RESPONSE_TIMEOUT:
    case RpcError.ErrorCode.CONNECTION_TIMEOUT:
      return { outcome: 'timeout', result: "the visitor's app did not answer in time" };
    case RpcError.ErrorCode.UNSUPPORTED_METHOD:
      return { outcome: 'error', result: "the visitor's app does not handle it" };
    case RpcError.ErrorCode.RECIPIENT_NOT_FOUND:
    case RpcError.ErrorCode.RECIPIENT_DISCONNECTED:
      return { outcome: 'error', result: "the visitor's app is not connected" };
    case RpcError.ErrorCode.APPLICATION_ERROR:
      // A handler's own RpcError keeps its message; any other throw arrives as "Application error".
      return { outcome: 'error', result: `the visitor's app answered with an error: ${excerpt(error.message, 300)}` };
    default:
      return { outcome: 'error', result: `the visitor's app could not be asked (${error.message})` };
  }
}

/** A client tool: the visitor's app answers over RPC (method = the tool's name, payload = the arguments' JSON). */
async function callClient(
  tool: DispatchTool,
  args: Record<string, unknown>,
  options: Pick<ToolsOptions, 'participant' | 'visitorIdentity'>,
): Promise<Outcome> {
  const participant = options.participant();
  if (!participant) return { outcome: 'error', result: "the visitor's app is not connected" };
  try {
    const answer = await participant.performRpc({
      destinationIdentity: options.visitorIdentity,
      method: tool.name,
      payload: JSON.stringify(args),
      responseTimeout: tool.timeout_ms,
    });
    return { outcome: 'ok', result: capBytes(answer) };
  } catch (error) {
    return rpcFailure(error);
  }
}
