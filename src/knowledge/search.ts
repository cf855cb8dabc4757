// Retrieval: a question against some of an account's documents → the passages that answer it,
// best first, above the embedding model's similarity floor and bounded in number and length
// (src/contract/knowledge.ts), so a turn's context stays small. Only ready documents embedded
// by the current model are searched: vectors of two models cannot be compared.
import { and, eq, inArray } from 'drizzle-orm';
import { KNOWLEDGE_MAX_CHARS, KNOWLEDGE_MAX_PASSAGES, type KnowledgePassage } from '../contract/knowledge.ts';
import type { Database } from '../db/index.ts';
import type { Embedder } from './embedder.ts';
import { OFFLINE_EMBEDDING_MODEL } from './offline-embedder.ts';
import { documents } from './schema.ts';
import { exactSearch, pgvectorSearch, type ScoredChunk, type SearchPath, searchCapabilities } from './store.ts';

/**
 * Each model's floor, measured on test/knowledge's questions (docs: knowledge.md): e5's scores
 * are compressed high (unrelated text scores ~0.75), OpenAI's 3-small spreads them lower.
 */
const DEFAULT_FLOORS: Record<string, number> = {
  [OFFLINE_EMBEDDING_MODEL]: 0.8,
  'text-embedding-3-small': 0.3,
  'text-embedding-3-large': 0.3,
};
/** A model not measured (an OpenAI-compatible server's): a middling floor. */
const UNKNOWN_MODEL_FLOOR = 0.3;

export function defaultSimilarityFloor(model: string): number {
  return DEFAULT_FLOORS[model] ?? UNKNOWN_MODEL_FLOOR;
}

/** A passage shorter than this is left out rather than cut to fit KNOWLEDGE_MAX_CHARS. */
const MIN_CUT_PASSAGE_CHARS = 200;

export interface SearchDeps {
  db: Database;
  embedder: Embedder;
  /** KNOWLEDGE_SIMILARITY_FLOOR; unset: the model's default (defaultSimilarityFloor). */
  similarityFloor?: number;
}

export interface SearchRequest {
  accountId: string;
  /** The documents to search; ids of other accounts, missing, failed or processing ones are skipped. */
  documentIds: readonly string[];
  query: string;
  /** At most this many passages (default KNOWLEDGE_MAX_PASSAGES). */
  limit?: number;
  /** Only passages scoring above this (default: deps.similarityFloor, else the model's). */
  floor?: number;
  /** Their text in all at most this many characters (default KNOWLEDGE_MAX_CHARS). */
  maxChars?: number;
}

export interface SearchResult {
  passages: KnowledgePassage[];
  /** Which search ran: the database's pgvector, or exact in this process. */
  path: SearchPath;
  /** The floor applied. */
  floor: number;
}

export async function search(deps: SearchDeps, request: SearchRequest): Promise<SearchResult> {
  const { db, embedder } = deps;
  const limit = request.limit ?? KNOWLEDGE_MAX_PASSAGES;
  const floor = request.floor ?? deps.similarityFloor ?? defaultSimilarityFloor(embedder.model);
  const { path } = await searchCapabilities(db);
  const ids = [...new Set(request.documentIds)];
  if (ids.length === 0 || limit < 1) return { passages: [], path, floor };
  const [searched, query] = await Promise.all([
    db
      .select({ id: documents.id, name: documents.name, chunks: documents.chunkCount })
      .from(documents)
      .where(
        and(
          eq(documents.accountId, request.accountId),
          inArray(documents.id, ids),
          eq(documents.status, 'ready'),
          eq(documents.embeddingModel, embedder.model),
        ),
      ),
    embedder.embedQuery(request.query),
  ]);
  if (searched.length === 0) return { passages: [], path, floor };
  const searchedIds = searched.map((d) => d.id);
  const chunks =
    path === 'pgvector'
      ? await pgvectorSearch(
          db,
          request.accountId,
          searchedIds,
          searched.reduce((sum, d) => sum + d.chunks, 0),
          query,
          limit,
        )
      : await exactSearch(db, searchedIds, query, limit);
  const names = new Map(searched.map((d) => [d.id, d.name]));
  return { passages: bounded(chunks, floor, request.maxChars ?? KNOWLEDGE_MAX_CHARS, names), path, floor };
}

/** Passages above the floor, best first, cut to `maxChars` of text in all. */
function bounded(chunks: ScoredChunk[], floor: number, maxChars: number, names: Map<string, string>) {
  const passages: KnowledgePassage[] = [];
  let room = maxChars;
  for (const chunk of chunks) {
    if (chunk.score < floor) break;
    let text = chunk.text;
    if (text.length > room) {
      if (room < MIN_CUT_PASSAGE_CHARS) break;
      const space = text.lastIndexOf(' ', room - 1);
      text = `${text.slice(0, space > room / 2 ? space : room - 1)}…`;
    }
    room -= text.length;
    passages.push({
      document_id: chunk.documentId,
      document_name: names.get(chunk.documentId) ?? '',
      text,
      score: Math.max(0, Math.min(1, chunk.score)),
    });
  }
  return passages;
}
