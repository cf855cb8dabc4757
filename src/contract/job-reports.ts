// What an agent job reports to the control plane about its session (docs/api.md#internal),
// POSTed as JSON to the dispatch's `report_url`. The control plane validates each with this
// schema at its edge (src/sessions/job-reports.ts); the job builds them with these types
// (agent/metering, agent/conversation/transcripts.ts). Every report may be delivered twice:
// minutes are charged once per (session, index), turns stored once per `turn_id`.
import { Type, type Static } from '@sinclair/typebox';
import { literalUnion } from './schema-parts.ts';

const Timestamp = Type.String({ format: 'date-time' });

export const TRANSCRIPT_ROLES = ['user', 'agent'] as const;

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
});

export const MeterReport = Type.Union([
  /** The avatar's first video frame was published: billing time starts here. */
  Type.Object({ type: Type.Literal('avatar_streaming'), at: Type.Optional(Timestamp) }),
  /** Minute `index` (0-based, counted from the first frame) is to be charged. */
  Type.Object({ type: Type.Literal('minute'), index: Type.Integer({ minimum: 0 }) }),
  Type.Object({ type: Type.Literal('visitor_left') }),
  /** The job is in the room: the session has its agent. */
  Type.Object({ type: Type.Literal('agent_joined') }),
  /** The job leaves though the session goes on: its worker is stopping (drained). The control plane moves the session, or ends it. */
  Type.Object({ type: Type.Literal('agent_leaving') }),
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

export const JobReport = Type.Union([...MeterReport.anyOf, TranscriptReport, AvatarFallbackReport]);

export type TranscriptReport = Static<typeof TranscriptReport>;
export type AvatarFallbackReport = Static<typeof AvatarFallbackReport>;
export type MeterReport = Static<typeof MeterReport>;
export type JobReport = Static<typeof JobReport>;
