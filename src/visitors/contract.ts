// The HTTP contract of visitors and their memory (docs/api.md#visitors): the start's
// `visitor_id`, `memory` and `memory_scope`, /v1/visitors and /v1/visitor-tokens. The same
// schemas validate requests and feed the OpenAPI document.
import { t } from 'elysia';
import {
  MEMORY_FACT_MAX_CHARS,
  MEMORY_MAX_FACTS,
  MEMORY_SCOPES,
  Timestamp,
  VISITOR_ID_MAX_CHARS,
} from '../contract/index.ts';
import { oneOf } from '../http/enum-schema.ts';

/** Ids as customers have them (a UUID, a number, an email, `crm:123`), and nothing that needs escaping in a path but `@` and `+`. */
export const VISITOR_ID_PATTERN = '^[A-Za-z0-9._:@+-]+$';

export const VisitorId = t.String({
  minLength: 1,
  maxLength: VISITOR_ID_MAX_CHARS,
  pattern: VISITOR_ID_PATTERN,
  description: `Your own id for the person (1–${VISITOR_ID_MAX_CHARS} of A–Z a–z 0–9 . _ : @ + -): a returning visitor is remembered by it.`,
});

export const MemoryScopeField = oneOf(
  MEMORY_SCOPES,
  "Whose memory: `identity` (default), what this identity's sessions learned of the visitor; `account`, one memory every identity of the account shares.",
);

/** The fields POST /v1/sessions/start takes for a visitor. */
export const SessionVisitorFields = {
  visitor_id: t.Optional(VisitorId),
  memory: t.Optional(
    t.Boolean({
      description:
        'Whether this session reads and adds to what is remembered of the visitor. Default true; only with `visitor_id`.',
    }),
  ),
  memory_scope: t.Optional(MemoryScopeField),
};

/** The fields GET /v1/sessions/{id} shows of them. */
export const SessionVisitorResponseFields = {
  visitor_id: t.Nullable(t.String(), {
    description: "The start's `visitor_id` (or its visitor token's); null: none, or the visitor was forgotten since.",
  }),
  memory_scope: t.Nullable(oneOf(MEMORY_SCOPES), {
    description: 'Whose memory the session read and added to; null: no memory (no visitor, or `memory: false`).',
  }),
};

export const VisitorParams = t.Object({ visitor_id: t.String() });

export const VisitorFact = t.Object({
  text: t.String({ description: 'One thing remembered, in a sentence.' }),
  identity_id: t.Nullable(t.String(), {
    description:
      "The identity whose sessions remember it (`memory_scope: identity`); null: the account's shared memory.",
  }),
  learned_at: Timestamp,
  session_id: t.Nullable(t.String({ description: 'The session it was learned in; null: written with PATCH.' })),
});

export const VisitorResponse = t.Object({
  visitor_id: t.String(),
  facts: t.Array(VisitorFact, { description: 'Oldest first, per identity and shared.' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  last_session_at: t.Nullable(Timestamp, { description: 'The last session started with this visitor.' }),
});

/** Facts one PATCH may list, over every scope. */
export const PATCH_MAX_FACTS = 1_000;

export const UpdateVisitorRequest = t.Object({
  facts: t.Array(
    t.Object({
      text: t.String({ minLength: 1, maxLength: MEMORY_FACT_MAX_CHARS }),
      identity_id: t.Optional(
        t.Nullable(t.String({ minLength: 1, maxLength: 100 }), {
          description: "An identity of the account; null or absent: the account's shared memory.",
        }),
      ),
    }),
    {
      // A bound on the request itself: the per-scope one is checked by scope (too_many_facts).
      maxItems: PATCH_MAX_FACTS,
      description: `What is remembered from now on, replacing every fact: a fact kept as it was keeps when and where it was learned. At most ${MEMORY_MAX_FACTS} per identity and for the account, ${PATCH_MAX_FACTS} in all. [] forgets every fact and keeps the visitor.`,
    },
  ),
});

export const VISITOR_TOKEN_TTL = { default: 3_600, minimum: 60, maximum: 86_400 } as const;

export const CreateVisitorTokenRequest = t.Object({
  visitor_id: VisitorId,
  memory_scope: t.Optional(MemoryScopeField),
  ttl_seconds: t.Optional(
    t.Integer({
      minimum: VISITOR_TOKEN_TTL.minimum,
      maximum: VISITOR_TOKEN_TTL.maximum,
      description: `How long the page may start with it; default ${VISITOR_TOKEN_TTL.default}.`,
    }),
  ),
});

export const VisitorTokenResponse = t.Object({
  visitor_token: t.String({
    description: 'For <likeness-avatar visitor-token="…"> (or `visitor_token` at POST /v1/embed/sessions).',
  }),
  visitor_id: t.String(),
  memory_scope: oneOf(MEMORY_SCOPES),
  expires_at: Timestamp,
});

export const ListVisitorsQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, description: 'Page size; default 100.' })),
  after: t.Optional(t.String({ description: 'The last `visitor_id` of the page before.' })),
});
