// The HTTP contract of /v1/publishable-keys (docs/api.md#publishable-keys) and of the start
// a website makes with one, POST /v1/embed/sessions (docs/api.md#embed-start): one schema per
// request and response, validated at the edge and shown in /openapi.json.
import { t } from 'elysia';
import { FORM_FACTORS } from '../contract/avatar-video.ts';
import { Timestamp } from '../contract/index.ts';
import { LANGUAGES } from '../contract/languages.ts';
import { oneOf } from '../http/enum-schema.ts';
import type { PublishableKeyLimits } from './schema.ts';

/** A new key's limits when its creator sets none: a few visitors at once, one session each. */
export const DEFAULT_PUBLISHABLE_KEY_LIMITS: PublishableKeyLimits = {
  sessions_per_minute: 10,
  concurrent_sessions: 5,
  visitor_sessions_per_minute: 3,
  visitor_concurrent_sessions: 1,
};
export const MAX_ALLOWED_ORIGINS = 20;
export const MAX_KEY_IDENTITIES = 50;
const LIMIT_MAX = 10_000;

const limit = (description: string) => t.Integer({ minimum: 1, maximum: LIMIT_MAX, description });
const LimitsSchema = t.Object({
  sessions_per_minute: limit(
    `Sessions started with the key in any minute. Default ${DEFAULT_PUBLISHABLE_KEY_LIMITS.sessions_per_minute}.`,
  ),
  concurrent_sessions: limit(
    `Its sessions running at once. Default ${DEFAULT_PUBLISHABLE_KEY_LIMITS.concurrent_sessions}.`,
  ),
  visitor_sessions_per_minute: limit(
    `Sessions one visitor address starts with it in any minute. Default ${DEFAULT_PUBLISHABLE_KEY_LIMITS.visitor_sessions_per_minute}.`,
  ),
  visitor_concurrent_sessions: limit(
    `Sessions of one visitor address running at once. Default ${DEFAULT_PUBLISHABLE_KEY_LIMITS.visitor_concurrent_sessions}.`,
  ),
});

const Name = t.String({ minLength: 1, maxLength: 100, examples: ['Shop website'] });
const AllowedOrigins = t.Array(t.String({ minLength: 1, maxLength: 300 }), {
  minItems: 1,
  maxItems: MAX_ALLOWED_ORIGINS,
  description:
    'The exact origins (scheme, host and port, no path) whose pages may start sessions with the key, e.g. `https://shop.example`. Browsers send it as `Origin`.',
  examples: [['https://shop.example', 'https://www.shop.example']],
});
const IdentityIds = t.Array(t.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: MAX_KEY_IDENTITIES,
  description:
    "The identities of this account the key may start sessions of (one not ready yet answers the start's 409).",
  examples: [['idn_7Hq2kLm9PzX4vB1nR8sT3w']],
});

const RecordSessions = t.Nullable(
  t.Boolean({
    description:
      "Whether the key's sessions are recorded (docs/api.md#recordings): the site owner decides for its embed. null (default): as each identity's `record_sessions` says.",
  }),
);

export const CreatePublishableKeyRequest = t.Object({
  name: t.Optional(Name),
  allowed_origins: AllowedOrigins,
  identity_ids: IdentityIds,
  limits: t.Optional(t.Partial(LimitsSchema, { description: 'Any of the four; the rest take their defaults.' })),
  record_sessions: t.Optional(RecordSessions),
});

export const UpdatePublishableKeyRequest = t.Object(
  {
    name: t.Optional(Name),
    allowed_origins: t.Optional(AllowedOrigins),
    identity_ids: t.Optional(IdentityIds),
    limits: t.Optional(t.Partial(LimitsSchema, { description: 'Any of the four; the rest stay.' })),
    record_sessions: t.Optional(RecordSessions),
  },
  { minProperties: 1 },
);

export const PublishableKeyParams = t.Object({ publishable_key_id: t.String() });

export const PublishableKeyResponse = t.Object({
  publishable_key_id: t.String({ examples: ['pbk_2xVb7Qm4LpZ9sK1cN8rT5w'] }),
  publishable_key: t.String({
    description: 'The key to put in your page (`lk_pub_…`; a test one `lk_pub_test_…`). Public by design.',
  }),
  name: t.Union([t.String(), t.Null()]),
  allowed_origins: t.Array(t.String()),
  identity_ids: t.Array(t.String()),
  limits: LimitsSchema,
  record_sessions: RecordSessions,
  test: t.Boolean({ description: 'Made with a test key: its sessions are test sessions (docs/api.md#test-mode).' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  last_used_at: t.Union([Timestamp, t.Null()]),
  revoked_at: t.Union([Timestamp, t.Null()]),
});

/** What a website's page may ask for: which identity, and how it shows it. Directing a session stays the server's. */
export const EmbedStartRequest = t.Object({
  identity_id: t.String({ minLength: 1, maxLength: 100, description: "One of the key's `identity_ids`." }),
  form_factor: t.Optional(oneOf(FORM_FACTORS, "The visitor's screen, as in POST /v1/sessions/start.")),
  language: t.Optional(oneOf(LANGUAGES, "The conversation's language; default the identity's.")),
  visitor_token: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 2_000,
      description:
        'From your backend (POST /v1/visitor-tokens): the session has that visitor and their memory. Without it an embed session has no visitor.',
    }),
  ),
});

export const EmbedStartResponse = t.Object({
  session_id: t.String(),
  room_name: t.String(),
  token: t.String({ description: "The visitor's room token (a LiveKit JWT)." }),
  rtc_url: t.String({ description: 'Where the page joins the room.' }),
  visual_awareness: t.Boolean({ description: 'Whether the agent sees the camera: the page may offer it.' }),
  max_duration_seconds: t.Integer(),
  test: t.Boolean({ description: 'A test session: costs nothing, short, marked "TEST" on the video.' }),
  record: t.Boolean({ description: 'The session is recorded: the page shows the visitor a visible "Recording" mark.' }),
});
