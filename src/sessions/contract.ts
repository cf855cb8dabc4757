// The HTTP contract of /v1/sessions (docs/api.md#sessions-start, #sessions-end, #sessions-read,
// #sessions-transcript). The same schemas validate requests and feed the OpenAPI document.

import { t } from 'elysia';
import { TestFlag } from '../accounts/index.ts';
import {
  AVATAR_FALLBACKS,
  FORM_FACTORS,
  GREETING_MAX_CHARS,
  IDLE_TIMEOUT_MAX_SECONDS,
  LANGUAGES,
  ORDER_SOURCES,
  RECORDING_NOTICE_MAX_CHARS,
  SESSION_CONTEXT_MAX_CHARS,
  Timestamp,
  TOOL_CALL_OUTCOMES,
  TOOL_NAME_PATTERN,
  TRANSCRIPT_ROLES,
} from '../contract/index.ts';
import { oneOf } from '../http/enum-schema.ts';
import { MAX_ATTACHED } from '../identities/contract.ts';
import { OutcomeSchemaField, SessionOutcomeFields } from '../outcomes/contract.ts';
import { SessionVisitorFields, SessionVisitorResponseFields } from '../visitors/index.ts';
import { END_REASONS, SESSION_STATUSES, SUMMARY_STATUSES } from './schema.ts';

export const StartSessionBody = t.Object(
  {
    identity_id: t.Optional(
      t.String({ minLength: 1, description: 'Identity to render as the avatar; implies avatar_enabled.' }),
    ),
    avatar_enabled: t.Optional(t.Boolean({ description: 'Adds avatar video; requires an identity.' })),
    language: t.Optional(oneOf(LANGUAGES, "Per-session override of the identity's language.")),
    visual_awareness: t.Optional(
      t.Boolean({ description: 'Camera frames accompany speech. Omit for the account default.' }),
    ),
    form_factor: t.Optional(oneOf(FORM_FACTORS, 'phone: portrait video; desktop: landscape where enabled.')),
    context: t.Optional(
      t.String({
        maxLength: SESSION_CONTEXT_MAX_CHARS,
        description:
          "Added to the identity's prompt for this session only (who the visitor is, what they bought…); the identity is unchanged. Surrounding whitespace is dropped; blank: none.",
      }),
    ),
    greeting: t.Optional(
      t.String({
        maxLength: GREETING_MAX_CHARS,
        description:
          'Spoken exactly as given instead of the built greeting (surrounding whitespace dropped). "" (or blank): the agent says nothing until the visitor speaks.',
      }),
    ),
    client_control: t.Optional(
      t.Boolean({
        description:
          "Whether the visitor's app may order say / interrupt / context from the room (LiveKit RPC). Default false.",
      }),
    ),
    idle_timeout_seconds: t.Optional(
      t.Integer({
        minimum: 0,
        maximum: IDLE_TIMEOUT_MAX_SECONDS,
        description:
          "A visitor silent this long is asked whether they are still there; as long again without a word, the session ends `idle`. 0: never. Default: the service's SESSION_IDLE_TIMEOUT_SECONDS (90).",
      }),
    ),
    record: t.Optional(
      t.Boolean({
        description:
          "Record the session: the avatar's video as the visitor saw it and both voices, one MP4 (GET /v1/sessions/{session_id}/recording). Default: the identity's `record_sessions`.",
      }),
    ),
    recording_notice: t.Optional(
      t.String({
        maxLength: RECORDING_NOTICE_MAX_CHARS,
        description:
          'A sentence the agent says before its greeting in a recorded session ("This conversation is recorded."). Only with a recorded session (422 otherwise); blank: none.',
      }),
    ),
    outcome_schema: t.Optional(OutcomeSchemaField),
    ...SessionVisitorFields,
    tool_ids: t.Optional(
      t.Array(t.String({ minLength: 1, maxLength: 100 }), {
        maxItems: MAX_ATTACHED,
        description: `The tools (GET /v1/tools) this session's agent may call, instead of the identity's; [] for none. At most ${MAX_ATTACHED}, each once, each of this account (422 otherwise).`,
      }),
    ),
    document_ids: t.Optional(
      t.Array(t.String({ minLength: 1, maxLength: 100 }), {
        maxItems: MAX_ATTACHED,
        description: `The documents (GET /v1/documents) this session's agent answers from, instead of the identity's; [] for none. At most ${MAX_ATTACHED}, each once, each of this account and not \`failed\` (422 otherwise).`,
      }),
    ),
  },
  { description: 'Every field optional; {} starts a default session.' },
);

export const SessionParams = t.Object({ session_id: t.String() });

export const StartSessionResponse = t.Object({
  room_name: t.String({ description: 'Also the session id.' }),
  token: t.String({ description: 'Room access token (JWT) for this room and a fresh participant.' }),
  rtc_url: t.String({ description: 'Realtime server URL (wss in production).' }),
  dispatch_id: t.String(),
  user: t.Object({ id: t.String({ description: 'Account id.' }) }),
  created_at: Timestamp,
  visual_awareness: t.Boolean({ description: 'The effective value for this session.' }),
  record: t.Boolean({ description: 'Whether the session is recorded: show the visitor a recording mark.' }),
});

/** Set when the identity's avatar service could not start and our own face streamed instead. */
export const AvatarFallback = t.Nullable(
  t.Object({
    pipeline_id: t.String({ description: 'The pipeline whose avatar service failed.' }),
    fallback: oneOf(AVATAR_FALLBACKS, '`builtin`: the talking head; `standin`: the photo.'),
    reason: t.String({ description: 'What the service answered, for the operator.' }),
  }),
);

/** What an invoice shows of a session (docs/api.md#credits). */
const invoiceFields = {
  billed_minutes: t.Integer({
    description:
      'Minutes charged: minute 0 began when the visitor first received the avatar, each next one a billing interval later while the visitor was in the room with it.',
  }),
  credits_charged: t.Integer({ description: 'Credits those minutes cost.' }),
  visitor_seconds: t.Integer({ description: 'Seconds the visitor was in the room with the avatar streaming.' }),
  streamed_seconds: t.Integer({ description: 'Seconds the avatar streamed, with or without the visitor.' }),
  duration_seconds: t.Integer({ description: 'Seconds from the start call to the end (to now while running).' }),
};

export const SessionEndMetadata = t.Object({
  end_reason: oneOf(END_REASONS),
  ...invoiceFields,
  ended_at: Timestamp,
  avatar_fallback: AvatarFallback,
});

export const EndSessionResponse = t.Object({
  session_id: t.String(),
  status: t.Literal('ended'),
  identity_id: t.Nullable(t.String()),
  pipeline_id: t.Nullable(t.String()),
  mode: t.Literal('meeting_agent'),
  metadata: t.Nullable(SessionEndMetadata),
});

const OptionalMs = (description: string) => t.Nullable(t.Integer({ minimum: 0 }), { description });
const ProviderName = (stage: string) =>
  t.Nullable(
    t.String({
      description: `The ${stage} provider: \`offline\` or the cloud plugin's name; null before the first turn.`,
    }),
  );

/** What the visitor experienced (docs/api.md#session-metrics); null where nothing was measured yet. */
export const SessionMetrics = t.Object(
  {
    first_frame_ms: OptionalMs(
      "The visitor joining → the avatar's first video frame (0 when the avatar was there first).",
    ),
    voice_to_voice_ms: t.Object(
      { p50: OptionalMs('Median.'), p95: OptionalMs('95th percentile.') },
      {
        description:
          "Over the answered turns: the visitor stops speaking → the agent's first audio (the last 500 turns).",
      },
    ),
    fps: t.Nullable(t.Number({ minimum: 0 }), {
      description:
        'Video frames per second the avatar delivered (target 25); null without a face drawn by the service.',
    }),
    turns: t.Integer({ minimum: 0, description: 'Agent turns that answered the visitor.' }),
    interruptions: t.Integer({ minimum: 0, description: 'Agent turns the visitor cut off.' }),
    tool_calls: t.Integer({ minimum: 0, description: 'Tool calls the agent made, whatever their outcome.' }),
    providers: t.Object({
      stt: ProviderName('speech-to-text'),
      llm: ProviderName('language model'),
      tts: ProviderName('text-to-speech'),
    }),
  },
  { description: "Per-session quality, from the agent job's reports of each turn." },
);

export const SessionResponse = t.Object({
  session_id: t.String(),
  status: oneOf(SESSION_STATUSES),
  identity_id: t.Nullable(t.String()),
  avatar_enabled: t.Boolean(),
  language: oneOf(LANGUAGES),
  visual_awareness: t.Boolean(),
  form_factor: t.Nullable(oneOf(FORM_FACTORS)),
  test: TestFlag,
  publishable_key_id: t.Nullable(
    t.String({
      description: 'Started by a website with this publishable key (POST /v1/embed/sessions); null: by a secret key.',
    }),
  ),
  end_reason: t.Nullable(oneOf(END_REASONS)),
  ...invoiceFields,
  created_at: Timestamp,
  joined_at: t.Nullable(Timestamp),
  streaming_started_at: t.Nullable(Timestamp),
  ended_at: t.Nullable(Timestamp),
  avatar_fallback: AvatarFallback,
  metrics: SessionMetrics,
  context: t.Nullable(t.String(), {
    description:
      "The start's `context`, in full on GET /v1/sessions/{session_id} only: null in lists (see `has_context`), and when none was set.",
  }),
  has_context: t.Boolean({ description: 'Whether the start set a `context`.' }),
  greeting: t.Nullable(t.String(), {
    description: 'The greeting the start set ("": none, silent until the visitor speaks); null: the built one.',
  }),
  client_control: t.Boolean({ description: "Whether the visitor's app may direct the agent from the room." }),
  idle_timeout_seconds: t.Integer({
    minimum: 0,
    description:
      'Silence before the visitor is asked whether they are still there (and as long again before it ends); 0: never.',
  }),
  record: t.Boolean({
    description:
      "Whether the session is recorded (the start's `record`, else its publishable key's or identity's `record_sessions`); the file: GET /v1/sessions/{session_id}/recording.",
  }),
  recording_notice: t.Nullable(t.String(), {
    description: 'The sentence said before the greeting of this recorded session; null: none.',
  }),
  summary: t.Nullable(t.String(), {
    description:
      "The conversation in at most three sentences, in the session's language, written by its language model once the session ended with a visitor turn; null until then, or when it could not be written.",
  }),
  summary_status: oneOf(
    SUMMARY_STATUSES,
    '`none`: running, or ended without a visitor turn; `pending`: being written; `ready`; `failed`: see `summary_detail`.',
  ),
  summary_detail: t.Nullable(t.String({ description: 'Why there is no summary (`failed`).' })),
  ...SessionOutcomeFields,
  ...SessionVisitorResponseFields,
  tool_ids: t.Array(t.String(), {
    description: "The tools its agent could call, fixed at the start (the start's `tool_ids`, or the identity's then).",
  }),
  document_ids: t.Array(t.String(), {
    description:
      "The documents its agent answered from, fixed at the start (the start's `document_ids`, or the identity's then).",
  }),
});

export const ListSessionsQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, description: 'Page size; default 100.' })),
  after: t.Optional(t.String({ description: 'session_id of the last item of the previous page.' })),
  status: t.Optional(oneOf(SESSION_STATUSES)),
});

/**
 * `api`, `client` or null, as one enum with null among its values: a nullable `oneOf` lists only
 * the strings in /openapi.json, so a null example (and answer) fails a validator reading it. Its
 * type is the nullable union's (Elysia's UnionEnum types its values without null).
 */
const nullableOrderSource = t.UnionEnum([...ORDER_SOURCES, null] as unknown as [string], {
  description:
    "An agent turn said on an order (docs/api.md#sessions-direct): `api`, the customer's backend (`POST /v1/sessions/{session_id}/say`); `client`, the visitor's app over RPC; null for the conversation's own turns.",
}) as unknown as ReturnType<typeof nullableOneOf<typeof ORDER_SOURCES>>;
delete (nullableOrderSource as { default?: unknown }).default;
function nullableOneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return t.Nullable(oneOf(values));
}

/** A `tool` turn's call, as the transcript shows it. */
export const TranscriptToolCall = t.Object(
  {
    call_id: t.String({ description: "The model's id for the call (a webhook receiver's `call_id`)." }),
    name: t.String({ pattern: TOOL_NAME_PATTERN, description: 'The tool called.' }),
    arguments: t.Record(t.String(), t.Unknown(), { description: 'The arguments the model gave.' }),
    result_excerpt: t.String({ description: 'The first 500 characters of the answer, or what went wrong.' }),
    duration_ms: t.Integer({ minimum: 0 }),
    outcome: oneOf(
      TOOL_CALL_OUTCOMES,
      '`ok`; `error`: it answered with an error; `timeout`: no answer in the tool’s time; `invalid_arguments`: the arguments broke the tool’s schema and nothing was called.',
    ),
  },
  { description: "A `tool` turn's call; null on other turns." },
);

export const TranscriptTurn = t.Object({
  role: oneOf(TRANSCRIPT_ROLES, '`user`: the visitor; `agent`: the identity; `tool`: a tool the agent called.'),
  text: t.String(),
  language: t.Union([t.String(), t.Null()], {
    description: 'ISO 639-1 code of the language heard or spoken, when known.',
  }),
  interrupted: t.Boolean({ description: 'An agent turn the visitor cut off; `text` is what was said until then.' }),
  ordered_by: nullableOrderSource,
  tool_call: t.Nullable(TranscriptToolCall),
  document_ids: t.Nullable(
    t.Array(t.String(), {
      description:
        'An agent turn that answered with passages of these documents in its context; null on other turns and when it used none.',
    }),
  ),
  started_at: Timestamp,
  ended_at: t.Union([Timestamp, t.Null()]),
});

export const TranscriptResponse = t.Object(
  { session_id: t.String(), turns: t.Array(TranscriptTurn) },
  { description: "The session's conversation so far, oldest turn first." },
);
