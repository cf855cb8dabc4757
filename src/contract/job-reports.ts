// What an agent job reports to the control plane about its session (docs/api.md#internal),
// POSTed as JSON to the dispatch's `report_url`. The control plane validates each with this
// schema at its edge (src/sessions/job-reports.ts); the job builds them with these types
// (agent/reports, agent/conversation/transcripts.ts, agent/conversation/quality.ts, and the
// conversation's orders, idle endings, summary, outcome and memory). Every
// report may be delivered twice: minutes are charged once per (session, index), turns stored
// and turn metrics counted once per `turn_id`.
import { type Static, Type } from '@sinclair/typebox';
import { TOOL_CALL_OUTCOMES, ToolCallRecord } from './agent-tools.ts';
import { literalUnion, Timestamp } from './schema-parts.ts';
import { ORDER_OUTCOMES, ORDER_SOURCES } from './session-direction.ts';
import { MemoryReport } from './visitor-memory.ts';

/** `tool`: a call the agent made (its `tool_call` says which and how it went). */
export const TRANSCRIPT_ROLES = ['user', 'agent', 'tool'] as const;

/** One finished turn of the conversation: user turns once transcribed, agent turns once spoken or cut off. */
export const TranscriptReport = Type.Object({
  type: Type.Literal('transcript'),
  turn_id: Type.String({ minLength: 1, maxLength: 200 }),
  role: literalUnion(TRANSCRIPT_ROLES, { description: 'Who spoke.' }),
  text: Type.String({ maxLength: 20_000 }),
  /** ISO 639-1, when known. */
  language: Type.Union([Type.String({ maxLength: 16 }), Type.Null()]),
  /** An agent turn the visitor cut off: `text` is what was said until then. */
  interrupted: Type.Boolean(),
  started_at: Timestamp,
  ended_at: Type.Union([Timestamp, Type.Null()]),
  /** An agent turn ordered with `say`: from the customer's backend (`api`) or the visitor's app (`client`). Absent: the conversation's own. */
  ordered_by: Type.Optional(literalUnion(ORDER_SOURCES)),
  /** A `tool` turn's call; `text` is then its result excerpt. */
  tool_call: Type.Optional(ToolCallRecord),
  /** An agent turn that answered with passages of these documents in its context (knowledge.ts). */
  document_ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 20 })),
});

/** How the agent took an order of the control plane's (session-direction.ts `SessionOrder`), by its id. */
export const OrderReport = Type.Object({
  type: Type.Literal('order'),
  order_id: Type.String({ minLength: 1, maxLength: 100 }),
  outcome: literalUnion(ORDER_OUTCOMES),
  /** Why it was refused, for the caller. */
  detail: Type.Optional(Type.String({ maxLength: 500 })),
});

/**
 * The visitor stayed silent through the idle question and as long again
 * (`idle_timeout_seconds`): the control plane ends the session `idle`, with a notice first.
 */
export const VisitorIdleReport = Type.Object({ type: Type.Literal('visitor_idle') });

/** The agent said goodbye through an `end_session` tool (agent-tools.ts): the session ends `agent_ended`. */
export const AgentEndedReport = Type.Object({ type: Type.Literal('agent_ended') });

/**
 * The conversation's summary, written by the job with the session's language model once the
 * session ended (sent only for a session with a visitor turn), or why there is none.
 */
export const SummaryReport = Type.Object({
  type: Type.Literal('summary'),
  /** At most three sentences, in the session's language; null: it could not be written. */
  text: Type.Union([Type.String({ minLength: 1, maxLength: 2_000 }), Type.Null()]),
  /** Why there is none, when `text` is null. */
  detail: Type.Optional(Type.String({ maxLength: 500 })),
});

/**
 * The conversation's outcome (contract/outcomes.ts), written by the job with the session's
 * language model once the session ended (sent only for a session with an outcome schema and a
 * visitor turn), or why there is none. The control plane checks `values` against the schema.
 */
export const OutcomeReport = Type.Object({
  type: Type.Literal('outcome'),
  /** Each of the schema's fields, its value or null; null: it could not be written. */
  values: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  /** Why there is none, when `values` is null. */
  detail: Type.Optional(Type.String({ maxLength: 500 })),
});

/** A very long session's milliseconds, with room: what a job's usage counts cannot pass. */
const MAX_USAGE_MS = 7 * 24 * 3_600_000;

/**
 * The job's usage so far, sent at each minute boundary, as the visitor leaves, as the job
 * leaves and at its close: how long its avatar streamed, and how long the visitor was in the
 * room with it, as of `at`, and whether each is still going on then (so the control plane can
 * count a job that stops reporting, taken over or ended, up to then). Each carries the job's
 * whole count: the latest stands.
 */
export const UsageReport = Type.Object({
  type: Type.Literal('usage'),
  streamed_ms: Type.Integer({ minimum: 0, maximum: MAX_USAGE_MS }),
  visitor_ms: Type.Integer({ minimum: 0, maximum: MAX_USAGE_MS }),
  at: Timestamp,
  streaming: Type.Boolean(),
  visitor_present: Type.Boolean(),
});

/** Why a job leaves a session that goes on; absent: `worker_stopping` (jobs before the reason was sent). */
export const AGENT_LEAVING_REASONS = ['worker_stopping', 'tracks_not_received'] as const;
export type AgentLeavingReason = (typeof AGENT_LEAVING_REASONS)[number];

export const MeterReport = Type.Union([
  /** The avatar's first video frame was published. */
  Type.Object({ type: Type.Literal('avatar_streaming'), at: Type.Optional(Timestamp) }),
  /**
   * Minute `index` (0-based over the session's jobs) is to be charged: minute 0 begins when the
   * visitor first receives the avatar, minute n n intervals later (docs/api.md#credits).
   */
  Type.Object({ type: Type.Literal('minute'), index: Type.Integer({ minimum: 0 }) }),
  UsageReport,
  Type.Object({ type: Type.Literal('visitor_left') }),
  /** The visitor came back after a `visitor_left`: the session goes on. */
  Type.Object({ type: Type.Literal('visitor_joined') }),
  /** The job is in the room: the session has its agent. */
  Type.Object({ type: Type.Literal('agent_joined') }),
  /**
   * The job leaves though the session goes on: its worker is stopping (drained), or LiveKit
   * never received its tracks (agent/avatar/delivery.ts). The control plane moves the session, or ends it.
   */
  Type.Object({
    type: Type.Literal('agent_leaving'),
    reason: Type.Optional(Type.Union(AGENT_LEAVING_REASONS.map((reason) => Type.Literal(reason)))),
  }),
]);

export const AVATAR_FALLBACKS = ['builtin', 'standin'] as const;

/** The identity's avatar service could not start: the session streams our own face instead. */
export const AvatarFallbackReport = Type.Object({
  type: Type.Literal('avatar_fallback'),
  pipeline_id: Type.String({ minLength: 1, maxLength: 100 }),
  /** What streams instead: the built-in talking head, or the stand-in (the photo). */
  fallback: literalUnion(AVATAR_FALLBACKS, { description: 'What streams instead.' }),
  reason: Type.String({ maxLength: 500 }),
});

/** A latency in ms, null where the turn did not measure it. */
const Milliseconds = Type.Union([Type.Number({ minimum: 0, maximum: 3_600_000 }), Type.Null()]);
const ProviderName = Type.String({ minLength: 1, maxLength: 100 });

/**
 * One agent turn's quality, sent once it was spoken or cut off (docs/api.md#session-metrics).
 * `turn_id` is the agent turn's transcript id: the control plane counts each once.
 */
export const TurnMetricsReport = Type.Object({
  type: Type.Literal('turn_metrics'),
  turn_id: Type.String({ minLength: 1, maxLength: 200 }),
  /** It answered the visitor; false for the greeting and other speech nobody asked for. */
  reply: Type.Boolean(),
  /** The visitor stopped speaking → the agent's first audio out, as the session measured it. */
  voice_to_voice_ms: Milliseconds,
  stages: Type.Object({
    /** End of speech → the final transcript. */
    stt_ms: Milliseconds,
    /** End of speech → the turn judged over (includes the transcript's wait). */
    eou_ms: Milliseconds,
    /** The reply's request → its first token. */
    llm_ttft_ms: Milliseconds,
    /** The first text to synthesise → its first audio. */
    tts_ttfb_ms: Milliseconds,
  }),
  interrupted: Type.Boolean(),
  /** The tools the model called for this turn, in order. Absent: none. */
  tool_calls: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String({ minLength: 1, maxLength: 64 }),
        outcome: literalUnion(TOOL_CALL_OUTCOMES),
        duration_ms: Type.Integer({ minimum: 0, maximum: 3_600_000 }),
      }),
      { maxItems: 20 },
    ),
  ),
  /** How long retrieving this turn's passages took (ms); absent without documents. */
  retrieval_ms: Type.Optional(Milliseconds),
  /** `offline` or the cloud plugin's name, per stage. */
  providers: Type.Object({ stt: ProviderName, llm: ProviderName, tts: ProviderName }),
  /** Video frames the avatar published since the job's previous turn report; null without a face drawn by the job (no avatar, or an avatar service). */
  video: Type.Union([
    Type.Object({ frames: Type.Integer({ minimum: 0 }), seconds: Type.Number({ minimum: 0, maximum: 86_400 }) }),
    Type.Null(),
  ]),
});

export const JobReport = Type.Union([
  ...MeterReport.anyOf,
  TranscriptReport,
  AvatarFallbackReport,
  TurnMetricsReport,
  OrderReport,
  VisitorIdleReport,
  AgentEndedReport,
  SummaryReport,
  OutcomeReport,
  MemoryReport,
]);

export type TranscriptReport = Static<typeof TranscriptReport>;
export type AvatarFallbackReport = Static<typeof AvatarFallbackReport>;
export type TurnMetricsReport = Static<typeof TurnMetricsReport>;
export type OrderReport = Static<typeof OrderReport>;
export type VisitorIdleReport = Static<typeof VisitorIdleReport>;
export type AgentEndedReport = Static<typeof AgentEndedReport>;
export type SummaryReport = Static<typeof SummaryReport>;
export type OutcomeReport = Static<typeof OutcomeReport>;
export type MeterReport = Static<typeof MeterReport>;
export type UsageReport = Static<typeof UsageReport>;
/** What the control plane keeps of the running job's usage. */
export type JobUsage = Omit<UsageReport, 'type'>;
export type JobReport = Static<typeof JobReport>;

/**
 * What the control plane keeps of a session's quality (sessions.quality), folded from the
 * job's turn_metrics reports (src/sessions/quality.ts); GET /v1/sessions/{id} derives its
 * `metrics` from it.
 */
export interface SessionQuality {
  /** The last turn ids folded in, so a redelivered report counts once (bounded: redeliveries come within seconds). */
  turn_ids: string[];
  /** Voice-to-voice of the last answered turns, ms, oldest first (bounded). */
  voice_to_voice_ms: number[];
  /** Agent turns that answered the visitor. */
  turns: number;
  /** Agent turns the visitor cut off. */
  interruptions: number;
  /** Video frames the avatar published, and over how long: delivered fps = frames / seconds. */
  frames: number;
  frame_seconds: number;
  providers: { stt: string; llm: string; tts: string } | null;
}
