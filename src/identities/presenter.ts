// Identity rows as response bodies (docs/api.md#identity-object, #identities-list, #identities-status).

import { isTestAccount } from '../accounts/index.ts';
import type { AssetLinks } from '../assets/index.ts';
import { providerAvatarOf } from '../pipelines/index.ts';
import { voiceIdOf } from '../voices/index.ts';
import type { Attachments } from './attachments.ts';
import type { IdentityRow } from './queries.ts';

export function identityResponse(row: IdentityRow, links: AssetLinks, attached: Attachments) {
  return {
    identity_id: row.id,
    name: row.name,
    language: row.language,
    prompt: row.prompt,
    image: links.url(row.image.key),
    audio: row.audio ? links.url(row.audio.key) : null,
    voice_id: voiceIdOf(row.voice),
    status: row.status,
    detail: row.detail,
    pipeline_id: row.pipelineId,
    provider_avatar_id: providerAvatarOf(row.training) ?? null,
    tool_ids: attached.toolIds,
    document_ids: attached.documentIds,
    record_sessions: row.recordSessions,
    outcome_schema: row.outcomeSchema ?? null,
    test: isTestAccount(row.accountId),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function identityStatusResponse(row: IdentityRow) {
  return { identity_id: row.id, status: row.status, updated_at: row.updatedAt.toISOString(), detail: row.detail };
}

export function identityListItem(row: IdentityRow, links: AssetLinks, attached: Attachments) {
  return {
    identity_id: row.id,
    name: row.name,
    language: row.language,
    status: row.status,
    image: links.url(row.image.key),
    tool_ids: attached.toolIds,
    document_ids: attached.documentIds,
    test: isTestAccount(row.accountId),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
