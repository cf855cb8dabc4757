// Settings of tools (src/tools) and knowledge (src/knowledge): their limits per account, and
// which model embeds the documents.
import type { CloudProvider } from './agent.ts';
import { type Env, integer } from './environment.ts';

export interface ToolSettings {
  /** Tools one account may have (TOOLS_MAX_PER_ACCOUNT). */
  maxPerAccount: number;
}

export interface KnowledgeSettings {
  /**
   * The embeddings: OpenAI's (KNOWLEDGE_EMBEDDING_MODEL, text-embedding-3-small, at 384
   * dimensions) when OPENAI_API_KEY or OPENAI_BASE_URL is set, else the offline
   * multilingual-e5-small the bootstrap installed (KNOWLEDGE_EMBEDDINGS=offline forces it).
   */
  openai: CloudProvider | undefined;
  /** Where the bootstrap put the offline models (its manifest names the embedding model). */
  modelsDir: string;
  /** Documents one account may have (KNOWLEDGE_MAX_DOCUMENTS_PER_ACCOUNT). */
  maxDocumentsPerAccount: number;
  /** The largest upload (KNOWLEDGE_MAX_DOCUMENT_BYTES, 10 MB). */
  maxDocumentBytes: number;
  /** Passages below this cosine similarity are never put in a turn (KNOWLEDGE_SIMILARITY_FLOOR); unset: the embedding model's own. */
  similarityFloor: number | undefined;
}

export function loadToolSettings(env: Env): ToolSettings {
  return { maxPerAccount: integer(env, 'TOOLS_MAX_PER_ACCOUNT', 50, 1) };
}

export function loadKnowledgeSettings(
  env: Env,
  openai: CloudProvider | undefined,
  modelsDir: string,
): KnowledgeSettings {
  const floor = env.KNOWLEDGE_SIMILARITY_FLOOR;
  const similarityFloor = floor ? Number(floor) : undefined;
  if (similarityFloor !== undefined && !(similarityFloor >= -1 && similarityFloor <= 1))
    throw new Error(`KNOWLEDGE_SIMILARITY_FLOOR must be a number from -1 to 1, got "${floor}"`);
  return {
    openai:
      openai && env.KNOWLEDGE_EMBEDDINGS !== 'offline'
        ? { ...openai, model: env.KNOWLEDGE_EMBEDDING_MODEL || 'text-embedding-3-small' }
        : undefined,
    modelsDir,
    maxDocumentsPerAccount: integer(env, 'KNOWLEDGE_MAX_DOCUMENTS_PER_ACCOUNT', 100, 1),
    maxDocumentBytes: integer(env, 'KNOWLEDGE_MAX_DOCUMENT_BYTES', 10 * 1024 * 1024, 1024),
    similarityFloor,
  };
}
