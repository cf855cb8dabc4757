// The HTTP contract of /v1/sessions (docs/api.md#sessions-start, #sessions-end, #sessions-read,
// #sessions-transcript). The same schemas validate requests and feed the OpenAPI document.
import { t } from 'elysia';
import { AVATAR_FALLBACKS, FORM_FACTORS, LANGUAGES, TRANSCRIPT_ROLES } from '../contract/index.ts';
import { oneOf } from '../http/enum-schema.ts';
import { END_REASONS, SESSION_STATUSES } from './schema.ts';

const Timestamp = t.String({ format: 'date-time' });

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
  end_reason: t.Nullable(oneOf(END_REASONS)),
  ...invoiceFields,
  created_at: Timestamp,
  joined_at: t.Nullable(Timestamp),
  streaming_started_at: t.Nullable(Timestamp),
  ended_at: t.Nullable(Timestamp),
  avatar_fallback: AvatarFallback,
  metrics: SessionMetrics,
});

export const ListSessionsQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, description: 'Page size; default 100.' })),
  after: t.Optional(t.String({ description: 'session_id of the last item of the previous page.' })),
  status: t.Optional(oneOf(SESSION_STATUSES)),
});

export const TranscriptTurn = t.Object({
  role: oneOf(TRANSCRIPT_ROLES, '`user`: the visitor; `agent`: the identity.'),
  text: t.String(),
  language: t.Union([t.String(), t.Null()], {
    description: 'ISO 639-1 code of the language heard or spoken, when known.',
  }),
  interrupted: t.Boolean({ description: 'An agent turn the visitor cut off; `text` is what was said until then.' }),
  started_at: Timestamp,
  ended_at: t.Union([Timestamp, t.Null()]),
});

export const TranscriptResponse = t.Object(
  { session_id: t.String(), turns: t.Array(TranscriptTurn) },
  { description: "The session's conversation so far, oldest turn first." },
);
