// Where the documents' passages are kept and searched. Every chunk keeps its embedding as
// float32 bytes (`embedding`); where the database has pgvector (PGlite, a Postgres with the
// extension), migration 0016 added `embedding_vector vector(384)` with an HNSW index, and the
// database ranks the passages; elsewhere (Debian's Postgres ships no pgvector) this process
// ranks them exactly from the bytes, keeping each searched document's vectors in memory
// (a ready document never changes). Which of the two a database gets is read once per handle.
import { and, asc, eq, inArray, notExists, sql } from 'drizzle-orm';
import { bigserial, customType, integer, pgTable, text } from 'drizzle-orm/pg-core';
import type { Database, Queryable } from '../db/index.ts';
import { log } from '../logging/index.ts';
import { EMBEDDING_DIMENSIONS } from './embedder.ts';
import { documentChunks, documents } from './schema.ts';

export type SearchPath = 'pgvector' | 'exact';

interface Capabilities {
  path: SearchPath;
  /** pgvector ≥ 0.8: an index scan with filters can go on until it found enough rows. */
  iterativeScan: boolean;
}

const vector = customType<{ data: Float32Array; driverData: string }>({
  dataType: () => `vector(${EMBEDDING_DIMENSIONS})`,
  toDriver: (value) => `[${Array.from(value).join(',')}]`,
});
const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({ dataType: () => 'bytea' });

/** document_chunks with the column only pgvector databases have (not in src/db/schema.ts: no migration makes it). */
const chunksWithVector = pgTable('document_chunks', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  documentId: text('document_id').notNull(),
  accountId: text('account_id').notNull(),
  ordinal: integer('ordinal').notNull(),
  text: text('text').notNull(),
  embedding: bytea('embedding').notNull(),
  embeddingVector: vector('embedding_vector'),
});

const capabilities = new WeakMap<Database, Promise<Capabilities>>();

/** Which search this database gets: pgvector where migration 0016 could add the column, else exact. */
export function searchCapabilities(db: Database): Promise<Capabilities> {
  let known = capabilities.get(db);
  if (!known) {
    known = readCapabilities(db);
    capabilities.set(db, known);
    known.catch(() => capabilities.delete(db)); // asked again next time
  }
  return known;
}

async function readCapabilities(db: Database): Promise<Capabilities> {
  const [column] = await db
    .select({ version: sql<string | null>`(select extversion from pg_extension where extname = 'vector')` })
    .from(sql`information_schema.columns`)
    .where(
      sql`table_schema = current_schema() and table_name = 'document_chunks' and column_name = 'embedding_vector'`,
    );
  const found: Capabilities = column
    ? { path: 'pgvector', iterativeScan: versionAtLeast(column.version ?? '0', [0, 8]) }
    : { path: 'exact', iterativeScan: false };
  log.info(
    { search: found.path, pgvector: column?.version ?? null },
    found.path === 'pgvector'
      ? 'documents are searched with pgvector (HNSW index)'
      : 'documents are searched exactly in this process (the database has no pgvector)',
  );
  return found;
}

function versionAtLeast(version: string, [major, minor]: [number, number]): boolean {
  const [a = 0, b = 0] = version.split('.').map(Number);
  return a > major || (a === major && b >= minor);
}

/** Float32s as little-endian bytes (`embedding`). */
export function embeddingBytes(vector: Float32Array): Buffer {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes;
}

/**
 * Rows per INSERT. PGlite runs on the API's own thread and keeps its vector index row by row
 * (2-11 ms a row as the index grows), so a statement of 200 rows held every request for seconds;
 * 16 rows stay well under a tenth of a second, and the loop runs between statements.
 */
const INSERT_BATCH = 16;

export interface NewChunk {
  text: string;
  embedding: Float32Array;
}

/**
 * A document's passages, in order, with their embeddings (and the pgvector column where there is
 * one), a statement at a time with the event loop let run between them: not in a transaction
 * (PGlite's one connection would hold every other query until its end); a document's passages
 * count only once it is `ready`, and a failed document's are deleted (`deleteUnreadyChunks`).
 */
export async function insertChunks(
  q: Queryable,
  path: SearchPath,
  document: { id: string; accountId: string },
  chunks: NewChunk[],
  signal?: AbortSignal,
): Promise<void> {
  for (let start = 0; start < chunks.length; start += INSERT_BATCH) {
    signal?.throwIfAborted();
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    const rows = chunks.slice(start, start + INSERT_BATCH).map((chunk, i) => ({
      documentId: document.id,
      accountId: document.accountId,
      ordinal: start + i,
      text: chunk.text,
      embedding: embeddingBytes(chunk.embedding),
      ...(path === 'pgvector' ? { embeddingVector: chunk.embedding } : {}),
    }));
    await q.insert(path === 'pgvector' ? chunksWithVector : documentChunks).values(rows);
  }
}

/**
 * The passages of a document that is not ready: an attempt that failed or was cut short. Never a
 * ready document's (another process may have finished it after this one's lease ran out).
 */
export async function deleteUnreadyChunks(q: Queryable, documentId: string): Promise<void> {
  const ready = q
    .select({ id: documents.id })
    .from(documents)
    .where(and(eq(documents.id, documentId), eq(documents.status, 'ready')));
  await q.delete(documentChunks).where(and(eq(documentChunks.documentId, documentId), notExists(ready)));
}

export interface ScoredChunk {
  documentId: string;
  text: string;
  /** Cosine similarity (the vectors are unit length: their dot product). */
  score: number;
}

/**
 * Below this many chunks in the searched documents the database compares the question with
 * every one (exact, and fast at this size); above it the HNSW index finds the nearest (PGlite
 * scans ~10,000 rows in 140 ms, its index answers in 10: bench/knowledge/latency.ts).
 */
export const INDEX_SCAN_MIN_CHUNKS = 2_000;

/** The `limit` best chunks of `documentIds` (the account's, checked by the caller) by pgvector. */
export async function pgvectorSearch(
  db: Database,
  accountId: string,
  documentIds: string[],
  totalChunks: number,
  query: Float32Array,
  limit: number,
): Promise<ScoredChunk[]> {
  const { iterativeScan } = await searchCapabilities(db);
  const literal = sql`${`[${Array.from(query).join(',')}]`}::vector`;
  const distance = sql`${chunksWithVector.embeddingVector} <#> ${literal}`;
  const useIndex = totalChunks >= INDEX_SCAN_MIN_CHUNKS;
  return db.transaction(async (tx) => {
    // With filters, an HNSW scan stops after ef_search candidates however few pass them; iterative
    // scans go on until `limit` rows passed (pgvector 0.8, relaxed order: re-sorted below).
    if (useIndex && iterativeScan) await tx.execute(sql`set local hnsw.iterative_scan = relaxed_order`);
    const rows = await tx
      .select({
        documentId: chunksWithVector.documentId,
        text: chunksWithVector.text,
        score: sql<number>`-(${distance})`.mapWith(Number),
      })
      .from(chunksWithVector)
      .where(and(eq(chunksWithVector.accountId, accountId), inArray(chunksWithVector.documentId, documentIds)))
      // `+ 0`: an expression the index cannot serve, so the rows are read by document and all compared.
      .orderBy(useIndex ? distance : sql`(${distance}) + 0`)
      .limit(limit);
    return rows.toSorted((a, b) => b.score - a.score);
  });
}

/** A ready document's passages and their vectors, as the exact search keeps them. */
interface LoadedDocument {
  texts: string[];
  /** Row after row of EMBEDDING_DIMENSIONS floats. */
  vectors: Float32Array;
  bytes: number;
}

/** The exact search's memory: documents most recently searched first out last, within this budget. */
export const EXACT_CACHE_BYTES = 256 * 1024 * 1024;
const loaded = new Map<string, Promise<LoadedDocument>>();
const loadedBytes = new Map<string, number>();
let cachedBytes = 0;

async function loadDocument(db: Database, documentId: string): Promise<LoadedDocument> {
  const rows = await db
    .select({ text: documentChunks.text, embedding: documentChunks.embedding })
    .from(documentChunks)
    .where(eq(documentChunks.documentId, documentId))
    .orderBy(asc(documentChunks.ordinal));
  const vectors = new Float32Array(rows.length * EMBEDDING_DIMENSIONS);
  rows.forEach((row, i) => {
    const bytes = row.embedding;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let d = 0; d < EMBEDDING_DIMENSIONS; d++) vectors[i * EMBEDDING_DIMENSIONS + d] = view.getFloat32(d * 4, true);
  });
  const texts = rows.map((row) => row.text);
  return { texts, vectors, bytes: vectors.byteLength + texts.reduce((sum, t) => sum + t.length * 2, 0) };
}

/** From memory when searched lately, else from the database (least recently used ones make room). */
function cachedDocument(db: Database, documentId: string): Promise<LoadedDocument> {
  let document = loaded.get(documentId);
  if (document !== undefined) {
    loaded.delete(documentId); // to the end: most recently used
    loaded.set(documentId, document);
    return document;
  }
  document = loadDocument(db, documentId);
  loaded.set(documentId, document);
  document.then(
    ({ bytes }) => {
      if (loaded.get(documentId) !== document) return;
      loadedBytes.set(documentId, bytes);
      cachedBytes += bytes;
      for (const [id] of loaded) {
        if (cachedBytes <= EXACT_CACHE_BYTES || id === documentId) break;
        forget(id);
      }
    },
    () => loaded.delete(documentId),
  );
  return document;
}

function forget(documentId: string): void {
  loaded.delete(documentId);
  cachedBytes -= loadedBytes.get(documentId) ?? 0;
  loadedBytes.delete(documentId);
}

/** A deleted document's memory goes at once (it would only age out otherwise). */
export const forgetDocument = forget;

/** The `limit` best chunks of `documentIds` (the account's ready ones, checked by the caller), compared here. */
export async function exactSearch(
  db: Database,
  documentIds: string[],
  query: Float32Array,
  limit: number,
): Promise<ScoredChunk[]> {
  const documents = await Promise.all(documentIds.map((id) => cachedDocument(db, id)));
  const best: ScoredChunk[] = [];
  documents.forEach(({ texts, vectors }, index) => {
    for (let row = 0; row < texts.length; row++) {
      let score = 0;
      const offset = row * EMBEDDING_DIMENSIONS;
      for (let d = 0; d < EMBEDDING_DIMENSIONS; d++) score += vectors[offset + d]! * query[d]!;
      if (best.length === limit && score <= best[limit - 1]!.score) continue;
      best.push({ documentId: documentIds[index]!, text: texts[row]!, score });
      best.sort((a, b) => b.score - a.score);
      if (best.length > limit) best.pop();
    }
  });
  return best;
}
