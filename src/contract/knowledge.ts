// Knowledge (docs/api.md#documents): what the job asks the control plane for each visitor
// turn, and the passages it gets back to put in that turn's context. The documents, their
// chunks and embeddings stay in the control plane (src/knowledge); the job holds none.
import { type Static, Type } from '@sinclair/typebox';

/** The longest question sent for retrieval (a visitor's turn, cut). */
export const KNOWLEDGE_QUERY_MAX_CHARS = 2_000;
/** At most this many passages per turn … */
export const KNOWLEDGE_MAX_PASSAGES = 3;
/** … and at most this much of their text in all: a turn's context stays bounded. */
export const KNOWLEDGE_MAX_CHARS = 2_400;

/** POST {knowledge_url} with the job's report token. */
export const KnowledgeRequest = Type.Object({
  query: Type.String({ minLength: 1, maxLength: KNOWLEDGE_QUERY_MAX_CHARS }),
});
export type KnowledgeRequest = Static<typeof KnowledgeRequest>;

export const KnowledgePassage = Type.Object({
  document_id: Type.String({ minLength: 1 }),
  document_name: Type.String(),
  text: Type.String(),
  /** Cosine similarity to the query, 0–1; only passages above the floor come back. */
  score: Type.Number(),
});
export type KnowledgePassage = Static<typeof KnowledgePassage>;

/** Best first; empty when nothing in the session's documents is close enough. */
export const KnowledgeAnswer = Type.Object({
  passages: Type.Array(KnowledgePassage, { maxItems: KNOWLEDGE_MAX_PASSAGES }),
  took_ms: Type.Integer({ minimum: 0 }),
});
export type KnowledgeAnswer = Static<typeof KnowledgeAnswer>;
