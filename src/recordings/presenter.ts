// A recording row as GET /v1/sessions/{id}/recording answers it (docs/api.md#recordings).
import type { AssetLinks } from '../assets/index.ts';
import type { recordings } from './schema.ts';

type RecordingRow = typeof recordings.$inferSelect;

/** Seconds to a tenth: what a person reads (the file's own length is in the file). */
export function secondsOf(ms: number | null): number | null {
  return ms === null ? null : Math.round(ms / 100) / 10;
}

export function recordingResponse(row: RecordingRow, links: AssetLinks) {
  const present = row.status === 'ready' && row.deletedAt === null;
  return {
    session_id: row.sessionId,
    status: row.status,
    reason: row.reason,
    duration_seconds: secondsOf(row.durationMs),
    size_bytes: row.sizeBytes,
    store: row.store,
    download_url: present && row.store === 'service' && row.objectKey ? links.url(row.objectKey) : null,
    object_key: row.store === 'customer' ? row.objectKey : null,
    created_at: row.createdAt.toISOString(),
    ready_at: row.readyAt?.toISOString() ?? null,
    deleted_at: row.deletedAt?.toISOString() ?? null,
  };
}
