// A document as the API shows it (docs/api.md#documents).

import { isTestAccount } from '../accounts/index.ts';
import type { DocumentType } from './file-types.ts';
import type { documents } from './schema.ts';

export type DocumentRow = typeof documents.$inferSelect;

export function presentDocument(row: DocumentRow) {
  return {
    document_id: row.id,
    name: row.name,
    content_type: row.contentType as DocumentType,
    bytes: row.bytes,
    status: row.status,
    detail: row.detail,
    chunks: row.chunkCount,
    test: isTestAccount(row.accountId),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
