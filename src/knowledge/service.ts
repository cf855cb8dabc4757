// The knowledge's long-lived parts, one per API process: the embedder (an OpenAI client, or
// the offline model's threads, started on first use) and the documents' background processing.
// src/server.ts opens it with the services, sweeps with it, and closes it on shutdown.
import type { KnowledgeSettings } from '../config.ts';
import type { Database } from '../db/index.ts';
import type { Embedder } from './embedder.ts';
import { OfflineEmbedder } from './offline-embedder.ts';
import { OpenAIEmbedder } from './openai-embedder.ts';
import { DocumentProcessing, failInterruptedDocuments } from './processing.ts';
import { type SearchRequest, type SearchResult, search } from './search.ts';

export interface KnowledgeServiceOptions {
  db: Database;
  settings: KnowledgeSettings;
  /** The lease a process holds on a document it processes (WORK_LEASE_SECONDS). */
  workLeaseSeconds: number;
  /** Instead of the one the settings name (tests, benches). */
  embedder?: Embedder;
}

/** OpenAI's when the settings have a provider for it (not with KNOWLEDGE_EMBEDDINGS=offline), else the offline model. */
export function createEmbedder(settings: KnowledgeSettings): Embedder {
  return settings.openai ? new OpenAIEmbedder(settings.openai) : new OfflineEmbedder(settings.modelsDir);
}

export class KnowledgeService {
  readonly embedder: Embedder;
  readonly processing: DocumentProcessing;
  readonly #db: Database;
  readonly #settings: KnowledgeSettings;

  constructor(options: KnowledgeServiceOptions) {
    this.#db = options.db;
    this.#settings = options.settings;
    this.embedder = options.embedder ?? createEmbedder(options.settings);
    this.processing = new DocumentProcessing({
      db: options.db,
      embedder: this.embedder,
      workLeaseSeconds: options.workLeaseSeconds,
      bounds: options.settings.processing,
      maxPassagesPerAccount: options.settings.maxPassagesPerAccount,
    });
  }

  /** search() over this service's database and embedder, with the operator's floor. */
  search(request: SearchRequest): Promise<SearchResult> {
    return search({ db: this.#db, embedder: this.embedder, similarityFloor: this.#settings.similarityFloor }, request);
  }

  /** The sweep (src/server.ts): documents a dead process left `processing` fail. */
  sweep(): Promise<number> {
    return failInterruptedDocuments(this.#db);
  }

  async close(): Promise<void> {
    await this.processing.close();
    await this.embedder.close();
  }
}
