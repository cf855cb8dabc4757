// Tools an agent may call in a conversation (docs/api.md#tools): what the dispatch tells the
// job of each (no URL, no secret: the job holds none), what the job asks the control plane
// to call for a webhook tool, and how a call went. The control plane builds the dispatch's
// tools (src/sessions/start.ts) and answers calls (src/tools); the job offers them to its
// model and runs client and end_session tools itself (agent/conversation/tools.ts).
import { type Static, Type } from '@sinclair/typebox';
import { literalUnion } from './schema-parts.ts';

/** A tool's name: what the model calls, and for a client tool the RPC method on the visitor. */
export const TOOL_NAME_PATTERN = '^[a-z][a-z0-9_]{0,63}$';
export const TOOL_DESCRIPTION_MAX_CHARS = 1_000;
/**
 * - `webhook`: the control plane POSTs the call, signed, to the tool's URL.
 * - `client`: the visitor's app answers it over LiveKit RPC (the tool's name is the method).
 * - `end_session`: the agent says goodbye and the session ends (`end_reason: agent_ended`).
 */
export const TOOL_TYPES = ['webhook', 'client', 'end_session'] as const;
export type ToolType = (typeof TOOL_TYPES)[number];

/** A call's longest wait, and the one a tool gets when it names none. */
export const TOOL_TIMEOUT_MAX_MS = 10_000;
export const TOOL_TIMEOUT_DEFAULT_MS = 5_000;
/** At most this much of a webhook's or a client's answer is read. */
export const TOOL_RESULT_MAX_BYTES = 64 * 1024;
/** What a transcript keeps of a call's result. */
export const TOOL_RESULT_EXCERPT_CHARS = 500;

/**
 * How a call went:
 * - `ok`: it answered (2xx, or the client's RPC returned);
 * - `error`: it answered with an error (non-2xx, the client threw, no such method, the tool is gone);
 * - `timeout`: no answer in the tool's time;
 * - `invalid_arguments`: the model's arguments broke the tool's schema; nothing was called.
 */
export const TOOL_CALL_OUTCOMES = ['ok', 'error', 'timeout', 'invalid_arguments'] as const;
export type ToolCallOutcome = (typeof TOOL_CALL_OUTCOMES)[number];

/** Arguments and parameters are JSON objects. */
const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** One tool as the job gets it in the dispatch metadata. */
export const DispatchTool = Type.Object({
  tool_id: Type.String({ minLength: 1 }),
  name: Type.String({ pattern: TOOL_NAME_PATTERN }),
  description: Type.String({ maxLength: TOOL_DESCRIPTION_MAX_CHARS }),
  type: literalUnion(TOOL_TYPES),
  /** A JSON Schema of type object (src/tools checked it on save). */
  parameters: JsonObject,
  timeout_ms: Type.Integer({ minimum: 1, maximum: TOOL_TIMEOUT_MAX_MS }),
});
export type DispatchTool = Static<typeof DispatchTool>;

/** POST {tool_calls_url}: the job asks the control plane to call a webhook tool (the job's report token). */
export const ToolCallRequest = Type.Object({
  /** The model's id for the call: the receiver's `call_id`, and how a retry is told apart. */
  call_id: Type.String({ minLength: 1, maxLength: 200 }),
  tool_id: Type.String({ minLength: 1, maxLength: 100 }),
  arguments: JsonObject,
});
export type ToolCallRequest = Static<typeof ToolCallRequest>;

/** The control plane's answer: always 200 when the session is the job's; the outcome says how the call went. */
export const ToolCallAnswer = Type.Object({
  outcome: literalUnion(TOOL_CALL_OUTCOMES),
  /** The receiver's answer (at most TOOL_RESULT_MAX_BYTES), or what went wrong, for the model. */
  result: Type.String(),
  duration_ms: Type.Integer({ minimum: 0 }),
});
export type ToolCallAnswer = Static<typeof ToolCallAnswer>;

/** A call as the transcript keeps it (a `tool` turn). */
export const ToolCallRecord = Type.Object({
  call_id: Type.String({ minLength: 1, maxLength: 200 }),
  name: Type.String({ pattern: TOOL_NAME_PATTERN }),
  arguments: JsonObject,
  result_excerpt: Type.String({ maxLength: TOOL_RESULT_EXCERPT_CHARS }),
  duration_ms: Type.Integer({ minimum: 0, maximum: 3_600_000 }),
  outcome: literalUnion(TOOL_CALL_OUTCOMES),
});
export type ToolCallRecord = Static<typeof ToolCallRecord>;
