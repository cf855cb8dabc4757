// The HTTP contract of /v1/voices (docs/api.md#voices): one schema per response type, fed to
// the OpenAPI document.
import { t } from 'elysia';

export const VoiceItem = t.Object({
  voice_id: t.String({ description: 'Send as `voice_id` when creating or updating an identity.' }),
  name: t.String(),
  description: t.String(),
  gender: t.String(),
  multilingual: t.Boolean({ description: 'Speaks every language mode; English-only voices allow only `en` sessions.' }),
  languages: t.Array(t.String(), { description: 'The pinned language modes it speaks.' }),
});
