import { bigserial, customType, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';
import { belongsTo, createdAt, instant, updatedAt } from '../db/columns.ts';

export const DOCUMENT_STATUSES = ['processing', 'ready', 'failed'] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

/** Raw bytes (an embedding's float32s, little-endian). */
const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => Buffer.from(value),
});

/** A document of an account's knowledge (docs/api.md#documents). Its text lives in its chunks. */
export const documents = pgTable(
  'documents',
  {
    id: text('id').primaryKey(),
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    name: text('name').notNull(),
    /** The upload's type as read from its bytes and name: text/plain, text/markdown, text/html, application/pdf. */
    contentType: text('content_type').notNull(),
    bytes: integer('bytes').notNull(),
    status: text('status', { enum: DOCUMENT_STATUSES }).notNull(),
    /** Why processing failed, for the user. */
    detail: text('detail'),
    chunkCount: integer('chunk_count').notNull().default(0),
    /** The model that embedded its chunks (a query is embedded with the same one). */
    embeddingModel: text('embedding_model'),
    /** While processing, the process doing it keeps this in the future; past it, the work was lost. */
    workedUntil: instant('worked_until'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('documents_account_created_idx').on(t.accountId, t.createdAt, t.id)],
);

/**
 * A document's passages and their embeddings. `embedding` (float32s) serves the exact search
 * everywhere; where the database has pgvector, the migration adds `embedding_vector vector(384)`
 * with an HNSW index beside it (drizzle/0016), which src/knowledge/store.ts uses instead.
 */
export const documentChunks = pgTable(
  'document_chunks',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    documentId: belongsTo('document_id', () => documents.id).notNull(),
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    ordinal: integer('ordinal').notNull(),
    text: text('text').notNull(),
    embedding: bytea('embedding').notNull(),
  },
  (t) => [index('document_chunks_document_idx').on(t.documentId, t.ordinal)],
);
