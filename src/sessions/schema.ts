import { bigserial, boolean, index, integer, json, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';
import type { ToolCallRecord } from '../contract/agent-tools.ts';
import { FORM_FACTORS } from '../contract/avatar-video.ts';
import type { SessionQuality } from '../contract/job-reports.ts';
import { type JobUsage, TRANSCRIPT_ROLES } from '../contract/job-reports.ts';
import { LANGUAGES } from '../contract/languages.ts';
import { ORDER_OPERATIONS, ORDER_OUTCOMES, ORDER_SOURCES } from '../contract/session-direction.ts';
import { MEMORY_SCOPES } from '../contract/visitor-memory.ts';
import { belongsTo, createdAt, instant } from '../db/columns.ts';
import { identities } from '../identities/schema.ts';
import { publishableKeys } from '../publishable-keys/schema.ts';

export const SESSION_STATUSES = ['running', 'ended'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export const END_REASONS = [
  'ended_by_api',
  'client_left',
  'no_join',
  'max_duration',
  'insufficient_credits',
  'room_closed',
  'agent_unavailable',
  'service_restarting',
  'idle',
  /** The agent ended it with an `end_session` tool. */
  'agent_ended',
] as const;
export type EndReason = (typeof END_REASONS)[number];

/**
 * A session's summary: `none` while it runs, or when it ended without a visitor turn; `pending`
 * once it ended with one, until the job's summary report (or the sweep giving up on it).
 */
export const SUMMARY_STATUSES = ['none', 'pending', 'ready', 'failed'] as const;
export type SummaryStatus = (typeof SUMMARY_STATUSES)[number];

/** One realtime conversation; its id is also the LiveKit room name (docs/api.md#sessions-start). */
export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    identityId: text('identity_id').references(() => identities.id, { onDelete: 'set null' }),
    pipelineId: text('pipeline_id'),
    /** The cloned ElevenLabs voice the agent speaks with: kept at the provider until the session ends. */
    elevenlabsVoiceId: text('elevenlabs_voice_id'),
    avatarEnabled: boolean('avatar_enabled').notNull(),
    language: text('language', { enum: LANGUAGES }).notNull(),
    visualAwareness: boolean('visual_awareness').notNull(),
    formFactor: text('form_factor', { enum: FORM_FACTORS }),
    dispatchId: text('dispatch_id').notNull(),
    /** The LiveKit identity minted into the client's token. */
    visitorIdentity: text('visitor_identity').notNull(),
    /** SHA-256 of the token the session's agent job reports with. */
    reportTokenHash: text('report_token_hash').notNull(),
    status: text('status', { enum: SESSION_STATUSES }).notNull().default('running'),
    endReason: text('end_reason', { enum: END_REASONS }),
    /**
     * Why an ending under way is closing the room, written before the room is deleted: the
     * room_finished (or participant_left) webhook that the deletion itself causes may arrive
     * before the ending is recorded, and must record this reason, not `room_closed`.
     */
    closingReason: text('closing_reason', { enum: END_REASONS }),
    /** Credits set aside at start for the first minute; released once a minute is charged or the session ends. */
    heldCredits: integer('held_credits').notNull().default(0),
    billedMinutes: integer('billed_minutes').notNull().default(0),
    creditsCharged: integer('credits_charged').notNull().default(0),
    maxDurationSeconds: integer('max_duration_seconds').notNull(),
    createdAt: createdAt(),
    joinedAt: instant('joined_at'),
    /** Since when the visitor is out of the room, waiting to come back (SESSION_REJOIN_SECONDS); null while in. */
    visitorGoneSince: instant('visitor_gone_since'),
    /** When the session's agent job reached the room (its report, or LiveKit's webhook); null again once that agent is lost. */
    agentJoinedAt: instant('agent_joined_at'),
    /** Since when the session waits for an agent: its start, or the loss of its agent. SESSION_AGENT_TIMEOUT_SECONDS counts from here. */
    agentWaitSince: instant('agent_wait_since'),
    /** When its agent was last dispatched (LiveKit offers a dispatch once: an unanswered one is sent again). */
    dispatchedAt: instant('dispatched_at'),
    /** When a worker's heartbeat last listed this session (or its agent joined): its agent is alive. */
    agentSeenAt: instant('agent_seen_at'),
    /** The worker whose heartbeat listed it last (agent_workers.id). */
    agentWorkerId: text('agent_worker_id'),
    streamingStartedAt: instant('streaming_started_at'),
    endedAt: instant('ended_at'),
    /** What the visitor experienced, from the job's reports (docs/api.md#session-metrics); null until the first. */
    quality: jsonb('quality').$type<SessionQuality>(),
    /** The identity's avatar service failed and our own face streamed instead (the job's report). */
    avatarFallback: jsonb('avatar_fallback').$type<{
      pipeline_id: string;
      fallback: 'builtin' | 'standin';
      reason: string;
    }>(),
    /**
     * Usage (docs/api.md#credits), ms: how long the avatar streamed and the visitor was in the
     * room with it, over the session's jobs that are done (taken over, or the session ended),
     * their last stretch counted up to then. The running job's own count is `usageCurrent`.
     */
    streamedMs: integer('streamed_ms').notNull().default(0),
    visitorMs: integer('visitor_ms').notNull().default(0),
    /** The running job's last usage report; folded into the sums when it is done. */
    usageCurrent: jsonb('usage_current').$type<JobUsage>(),
    /** Directing (docs/api.md#sessions-direct): the start's context and greeting (null: none, the built one). */
    context: text('context'),
    greeting: text('greeting'),
    /** Whether the visitor's app may order say / interrupt / context from the room. */
    clientControl: boolean('client_control').notNull().default(false),
    /** A silent visitor is asked after this long and the session ends after as long again; 0 never. */
    idleTimeoutSeconds: integer('idle_timeout_seconds').notNull().default(0),
    /** The tools and documents this session's agent uses, fixed at its start (the start's, or the identity's then). */
    toolIds: jsonb('tool_ids').$type<string[]>().notNull().default([]),
    documentIds: jsonb('document_ids').$type<string[]>().notNull().default([]),
    /** The conversation's summary once written (docs/api.md#sessions-summary). */
    summary: text('summary'),
    summaryStatus: text('summary_status', { enum: SUMMARY_STATUSES }).notNull().default('none'),
    /** Why there is no summary (`failed`). */
    summaryDetail: text('summary_detail'),
    /**
     * What the conversation achieved, as fields (docs/api.md#outcomes): the schema this session's
     * outcome fills (the start's, else its identity's; null: none), and the object once written.
     * `json`, not `jsonb`: the customer's order of fields is kept (jsonb sorts keys by length).
     */
    outcomeSchema: json('outcome_schema').$type<Record<string, unknown>>(),
    outcome: json('outcome').$type<Record<string, unknown>>(),
    /** As `summaryStatus`: `pending` once a session with a schema and a visitor turn ended. */
    outcomeStatus: text('outcome_status', { enum: SUMMARY_STATUSES }).notNull().default('none'),
    /** Why there is no outcome (`failed`). */
    outcomeDetail: text('outcome_detail'),
    /** Started by a website with this publishable key (docs/api.md#embed-start); null: by a secret key. */
    publishableKeyId: text('publishable_key_id').references(() => publishableKeys.id, { onDelete: 'set null' }),
    /** SHA-256 of the visitor's address when started with a publishable key: its per-visitor limits count by it. */
    visitorAddressHash: text('visitor_address_hash'),
    /** Recorded (the start's `record`, else its key's or identity's default): its file is in `recordings`. */
    record: boolean('record').notNull().default(false),
    /** Said before the greeting of a recorded session; null: nothing. */
    recordingNotice: text('recording_notice'),
    /**
     * The customer's id for the person (docs/api.md#visitors): the start's `visitor_id`, or a
     * visitor token's on an embed. Null: none, or forgotten since (DELETE /v1/visitors/{id}).
     */
    visitorId: text('visitor_id'),
    /** Whose memory this session reads and writes: null without a visitor or with `memory: false`. */
    memoryScope: text('memory_scope', { enum: MEMORY_SCOPES }),
  },
  (t) => [
    index('sessions_visitor_idx').on(t.accountId, t.visitorId),
    index('sessions_publishable_key_idx').on(t.publishableKeyId, t.createdAt),
    index('sessions_account_created_idx').on(t.accountId, t.createdAt, t.id),
    index('sessions_status_idx').on(t.status),
    index('sessions_voice_idx').on(t.elevenlabsVoiceId),
  ],
);

/** One finished turn of a session's conversation, as the agent job reported it. */
export const sessionTranscripts = pgTable(
  'session_transcripts',
  {
    /** Insertion order breaks ties between turns reported with the same timestamp. */
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    sessionId: belongsTo('session_id', () => sessions.id).notNull(),
    role: text('role', { enum: TRANSCRIPT_ROLES }).notNull(),
    text: text('text').notNull(),
    /** The language the turn was heard or spoken in (ISO 639-1), when known. */
    language: text('language'),
    /** An agent turn the visitor cut off: `text` is what was said before the interruption. */
    interrupted: boolean('interrupted').notNull().default(false),
    /** The job's own id for the turn, so a report delivered twice is stored once. */
    turnId: text('turn_id').notNull(),
    /** An agent turn ordered with `say`: `api` or `client`; null for the conversation's own. */
    orderedBy: text('ordered_by', { enum: ORDER_SOURCES }),
    /** A `tool` turn's call (name, arguments, result excerpt, duration, outcome). */
    toolCall: jsonb('tool_call').$type<ToolCallRecord>(),
    /** An agent turn's documents: those whose passages were in its context. */
    documentIds: jsonb('document_ids').$type<string[]>(),
    startedAt: instant('started_at').notNull(),
    endedAt: instant('ended_at'),
  },
  (t) => [
    index('session_transcripts_session_idx').on(t.sessionId, t.startedAt, t.seq),
    uniqueIndex('session_transcripts_turn_idx').on(t.sessionId, t.turnId),
  ],
);

/**
 * An order to a running session's agent (say, interrupt, context) from the customer's backend:
 * the API process that sent it waits for the outcome the agent reports here, whichever API
 * process receives that report.
 */
export const sessionOrders = pgTable(
  'session_orders',
  {
    id: text('id').primaryKey(),
    sessionId: belongsTo('session_id', () => sessions.id).notNull(),
    operation: text('operation', { enum: ORDER_OPERATIONS }).notNull(),
    /** null until the agent reported how it took the order. */
    outcome: text('outcome', { enum: ORDER_OUTCOMES }),
    detail: text('detail'),
    createdAt: createdAt(),
    answeredAt: instant('answered_at'),
  },
  (t) => [index('session_orders_session_idx').on(t.sessionId, t.createdAt)],
);
