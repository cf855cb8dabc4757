// The HTTP contract of /v1/sessions (spec §2.4, §2.5, §4.6, §4.7) plus the reads beyond
// the spec. The same schemas validate requests and feed the OpenAPI document.
import { t } from 'elysia';
import { LANGUAGES } from '../identities/schema.ts';
import { oneOf } from '../http/schemas.ts';
import { END_REASONS, FORM_FACTORS, SESSION_STATUSES, TRANSCRIPT_ROLES } from './schema.ts';

const Timestamp = t.String({ format: 'date-time' });

export const StartSessionBody = t.Object(
  {
    identity_id: t.Optional(t.String({ minLength: 1, description: 'Identity to render as the avatar; implies avatar_enabled.' })),
    avatar_enabled: t.Optional(t.Boolean({ description: 'Adds avatar video; requires an identity.' })),
    language: t.Optional(oneOf(LANGUAGES, "Per-session override of the identity's language.")),
    visual_awareness: t.Optional(t.Boolean({ description: 'Camera frames accompany speech. Omit for the account default.' })),
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

export const SessionEndMetadata = t.Object({
  end_reason: oneOf(END_REASONS),
  billed_minutes: t.Integer(),
  credits_charged: t.Integer(),
  ended_at: Timestamp,
});

export const EndSessionResponse = t.Object({
  session_id: t.String(),
  status: t.Literal('ended'),
  identity_id: t.Nullable(t.String()),
  pipeline_id: t.Nullable(t.String()),
  mode: t.Literal('meeting_agent'),
  metadata: t.Nullable(SessionEndMetadata),
});

export const SessionResponse = t.Object({
  session_id: t.String(),
  status: oneOf(SESSION_STATUSES),
  identity_id: t.Nullable(t.String()),
  avatar_enabled: t.Boolean(),
  language: oneOf(LANGUAGES),
  visual_awareness: t.Boolean(),
  form_factor: t.Nullable(oneOf(FORM_FACTORS)),
  end_reason: t.Nullable(oneOf(END_REASONS)),
  billed_minutes: t.Integer(),
  credits_charged: t.Integer(),
  created_at: Timestamp,
  joined_at: t.Nullable(Timestamp),
  streaming_started_at: t.Nullable(Timestamp),
  ended_at: t.Nullable(Timestamp),
});

export const ListSessionsQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, description: 'Page size; default 100.' })),
  after: t.Optional(t.String({ description: 'session_id of the last item of the previous page.' })),
  status: t.Optional(oneOf(SESSION_STATUSES)),
});

/** What an agent job reports about its session (internal). */
export const SessionReport = t.Union([
  t.Object({ type: t.Literal('avatar_streaming'), at: t.Optional(Timestamp) }),
  t.Object({ type: t.Literal('minute'), index: t.Integer({ minimum: 0 }) }),
  t.Object({ type: t.Literal('visitor_left') }),
  t.Object({ type: t.Literal('agent_joined') }),
  t.Object({
    type: t.Literal('transcript'),
    turn_id: t.String({ minLength: 1, maxLength: 200 }),
    role: oneOf(TRANSCRIPT_ROLES, 'Who spoke.'),
    text: t.String({ maxLength: 20_000 }),
    language: t.Union([t.String({ maxLength: 16 }), t.Null()]),
    interrupted: t.Boolean(),
    started_at: Timestamp,
    ended_at: t.Union([Timestamp, t.Null()]),
  }),
]);

export const TranscriptTurn = t.Object({
  role: oneOf(TRANSCRIPT_ROLES, '`user`: the visitor; `agent`: the identity.'),
  text: t.String(),
  language: t.Union([t.String(), t.Null()], { description: 'ISO 639-1 code of the language heard or spoken, when known.' }),
  interrupted: t.Boolean({ description: 'An agent turn the visitor cut off; `text` is what was said until then.' }),
  started_at: Timestamp,
  ended_at: t.Union([Timestamp, t.Null()]),
});

export const TranscriptResponse = t.Object(
  { session_id: t.String(), turns: t.Array(TranscriptTurn) },
  { description: "The session's conversation so far, oldest turn first." },
);
