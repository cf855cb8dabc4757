// The HTTP contract of /v1/identities: one schema per request and response type. The
// same schemas validate requests at the edge and feed the OpenAPI document.

import { t } from 'elysia';
import { TestFlag } from '../accounts/index.ts';
import { Timestamp } from '../contract/index.ts';
import { LANGUAGES } from '../contract/languages.ts';
import { oneOf } from '../http/enum-schema.ts';
import { LEAD_OUTCOME_SCHEMA } from '../outcomes/contract.ts';
import { IDENTITY_STATUSES } from './schema.ts';

export const NAME_MAX = 200;
/** At most this many tools, and as many documents, per identity or session start. */
export const MAX_ATTACHED = 20;
export const PROMPT_MAX = 20_000;

const Language = oneOf(LANGUAGES, 'auto, en, es, pl or uk');
const Status = oneOf(IDENTITY_STATUSES);
const VoiceId = t.String({
  minLength: 1,
  description:
    'A preset voice from GET /v1/voices, instead of uploading audio; replaces the voice and drops an uploaded sample.',
});

const ProviderAvatarId = t.String({
  minLength: 1,
  maxLength: 200,
  description:
    'For hosted pipelines: the avatar at the provider that animates this identity (required by `bey`; optional for `anam`, which otherwise makes one from the photo). Checked with the provider: 422 when unknown. Other pipelines refuse it. Immutable.',
});

/**
 * A form field holding one JSON array of ids (`tool_ids=["tool_…","tool_…"]`): multipart forms
 * have no arrays, and one field keeps "[]" (clear the list) sayable. Its content is checked by
 * parseIdLists (attachments.ts), where a bad entry is told by its place.
 */
const idListField = (description: string) => t.String({ maxLength: 10_000, description });
const ToolIdsField = idListField(
  `The tools (GET /v1/tools) the agent may call, in order, as one JSON array: ["tool_…"]. At most ${MAX_ATTACHED}, each once, each of this account (422 otherwise).`,
);
const DocumentIdsField = idListField(
  `The documents (GET /v1/documents) the agent answers from, as one JSON array: ["doc_…"]. At most ${MAX_ATTACHED}, each once, each of this account and not \`failed\` (422 otherwise).`,
);

/** A form field ("true" / "false"); JSON bodies carry a boolean. */
const RecordSessionsField = t.BooleanString({
  description:
    'Record its sessions unless a start says otherwise (docs/api.md#recordings): "true" or "false". Default false.',
});

/** A form field: the schema as JSON text (docs/api.md#outcomes); `null` clears it (PATCH). */
const OutcomeSchemaFormField = t.String({
  maxLength: 64 * 1024,
  description:
    "The outcome its sessions fill in once they end, unless a start gives another (docs/api.md#outcomes): a JSON Schema of type `object` as JSON text, each property with a `description`; the same subset as a tool's `parameters`. `null` clears it.",
  examples: [JSON.stringify(LEAD_OUTCOME_SCHEMA)],
});

export const CreateIdentityForm = t.Object({
  name: t.String({ minLength: 1, maxLength: NAME_MAX, description: 'Display name.' }),
  prompt: t.String({ minLength: 1, maxLength: PROMPT_MAX, description: "The avatar's system prompt." }),
  image: t.File({ description: 'Portrait photo: image/jpeg, image/png or image/webp (judged from the bytes).' }),
  audio: t.Optional(
    t.File({
      description:
        'Voice sample: audio/wav, audio/mpeg or audio/mp4; at most 2 minutes. Cloned into a multilingual voice.',
    }),
  ),
  voice_id: t.Optional(VoiceId),
  language: t.Optional(Language),
  pipeline_id: t.Optional(
    t.String({ minLength: 1, description: 'Renderer pipeline; immutable. Omit for the default.' }),
  ),
  provider_avatar_id: t.Optional(ProviderAvatarId),
  tool_ids: t.Optional(ToolIdsField),
  document_ids: t.Optional(DocumentIdsField),
  record_sessions: t.Optional(RecordSessionsField),
  outcome_schema: t.Optional(OutcomeSchemaFormField),
});

export const UpdateIdentityForm = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: NAME_MAX })),
  prompt: t.Optional(
    t.String({ minLength: 1, maxLength: PROMPT_MAX, description: 'Required with image or audio uploads.' }),
  ),
  image: t.Optional(t.File()),
  audio: t.Optional(t.File({ description: 'A new voice sample: retrains (202) and replaces the voice.' })),
  voice_id: t.Optional(VoiceId),
  language: t.Optional(Language),
  pipeline_id: t.Optional(t.String({ description: 'Immutable: sending it answers 422.' })),
  provider_avatar_id: t.Optional(t.String({ description: 'Immutable: sending it answers 422.' })),
  tool_ids: t.Optional(ToolIdsField),
  document_ids: t.Optional(DocumentIdsField),
  record_sessions: t.Optional(RecordSessionsField),
  outcome_schema: t.Optional(OutcomeSchemaFormField),
});

export const IdentityParams = t.Object({ identity_id: t.String() });

export const ListIdentitiesQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, description: 'Page size; omit for every identity.' })),
  after: t.Optional(t.String({ description: 'identity_id of the last item of the previous page.' })),
});

const ToolIds = t.Array(t.String(), {
  description: 'The tools its agent may call, in order; a tool deleted since is no longer listed.',
});
const DocumentIds = t.Array(t.String(), {
  description: 'The documents its agent answers from, in order; a document deleted since is no longer listed.',
});

export const IdentityResponse = t.Object({
  identity_id: t.String(),
  name: t.String(),
  language: Language,
  prompt: t.String(),
  image: t.String({ format: 'uri' }),
  audio: t.Nullable(t.String({ format: 'uri' })),
  voice_id: t.Nullable(
    t.String({
      description:
        'The preset voice (GET /v1/voices; `default` when none was chosen); null when the voice is cloned from `audio`.',
    }),
  ),
  status: Status,
  detail: t.Nullable(t.String()),
  pipeline_id: t.String(),
  provider_avatar_id: t.Nullable(
    t.String({
      description:
        'The hosted provider’s avatar that animates the identity (pipelines `anam`, `bey`); null for the others.',
    }),
  ),
  tool_ids: ToolIds,
  document_ids: DocumentIds,
  record_sessions: t.Boolean({ description: 'Its sessions are recorded unless a start says otherwise.' }),
  outcome_schema: t.Nullable(t.Record(t.String(), t.Unknown()), {
    description: 'The outcome its sessions fill in unless a start gives another; null: none.',
    examples: [LEAD_OUTCOME_SCHEMA],
  }),
  test: TestFlag,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const IdentityStatusResponse = t.Object({
  identity_id: t.String(),
  status: Status,
  updated_at: Timestamp,
  detail: t.Nullable(t.String()),
});

export const IdentityListItem = t.Object({
  identity_id: t.String(),
  name: t.String(),
  language: Language,
  status: Status,
  image: t.String({ format: 'uri' }),
  tool_ids: ToolIds,
  document_ids: DocumentIds,
  test: TestFlag,
  created_at: Timestamp,
  updated_at: Timestamp,
});
