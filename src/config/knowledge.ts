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
  /**
   * What one document's processing may take and produce (docs/api.md#documents): it runs in a
   * child process of its own, stopped at the first bound it crosses, and the document fails
   * with a detail naming that bound.
   */
  processing: DocumentProcessingBounds;
  /** Passages all of an account's documents may hold together (KNOWLEDGE_MAX_PASSAGES_PER_ACCOUNT). */
  maxPassagesPerAccount: number;
  /** Passages below this cosine similarity are never put in a turn (KNOWLEDGE_SIMILARITY_FLOOR); unset: the embedding model's own. */
  similarityFloor: number | undefined;
}

export interface DocumentProcessingBounds {
  /** Budget of a document's processing: its reading's CPU time, then the wall time to ready (KNOWLEDGE_PROCESSING_SECONDS, 600: the offline model embeds a passage in ~0.25 s on one core, so the 1,000-passage bound takes ~250 s there). */
  seconds: number;
  /** Memory the extraction process may hold (KNOWLEDGE_PROCESSING_MEMORY_MB, 512). */
  memoryBytes: number;
  /** Characters of text a document may give (KNOWLEDGE_MAX_DOCUMENT_CHARACTERS, 500,000: ~250 pages of prose). */
  maxCharacters: number;
  /** Passages a document may give (KNOWLEDGE_MAX_PASSAGES_PER_DOCUMENT, 1,000). */
  maxPassages: number;
  /** Pages of a PDF (KNOWLEDGE_MAX_PDF_PAGES, 500). */
  maxPdfPages: number;
  /** Bytes a PDF's compressed streams may inflate to, all together (KNOWLEDGE_MAX_PDF_INFLATED_MB, 200). */
  maxPdfInflatedBytes: number;
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
    processing: {
      seconds: integer(env, 'KNOWLEDGE_PROCESSING_SECONDS', 600, 1),
      memoryBytes: integer(env, 'KNOWLEDGE_PROCESSING_MEMORY_MB', 512, 64) * 1024 * 1024,
      maxCharacters: integer(env, 'KNOWLEDGE_MAX_DOCUMENT_CHARACTERS', 500_000, 1000),
      maxPassages: integer(env, 'KNOWLEDGE_MAX_PASSAGES_PER_DOCUMENT', 1000, 1),
      maxPdfPages: integer(env, 'KNOWLEDGE_MAX_PDF_PAGES', 500, 1),
      maxPdfInflatedBytes: integer(env, 'KNOWLEDGE_MAX_PDF_INFLATED_MB', 200, 1) * 1024 * 1024,
    },
    maxPassagesPerAccount: integer(env, 'KNOWLEDGE_MAX_PASSAGES_PER_ACCOUNT', 20_000, 1),
    similarityFloor,
  };
}
