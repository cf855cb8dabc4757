// The knowledge bench's documents, uploaded the way a customer does (POST /v1/documents to the
// service, on its embedded PGlite, or on Postgres with DATABASE_URL), processed by the service
// (extraction, passages, embeddings with the offline multilingual-e5-small), then searched with
// the service's own KnowledgeService.search: what the internal route a job asks each turn
// (POST /internal/sessions/{id}/knowledge) runs, minus the HTTP.
import type { SearchResult } from '../../src/knowledge/index.ts';
import { defaultSimilarityFloor } from '../../src/knowledge/index.ts';
import {
  type BenchAccount,
  type BenchService,
  type BenchServiceOptions,
  createBenchAccount,
  startBenchService,
} from '../support/index.ts';
import { loadDocuments } from './question-set.ts';

/** How long the documents may take to become ready. */
const READY_TIMEOUT_MS = 300_000;

export interface KnowledgeBench {
  bench: BenchService;
  account: BenchAccount;
  documentIds: string[];
  /** The database, the embedding model and the floor, for the figures' heading. */
  describe(): string;
  /** The floor the service applies (KNOWLEDGE_SIMILARITY_FLOOR, else the model's own). */
  floor: number;
  /** The same search as a turn's, with the service's floor unless `floor` is given. */
  search(query: string, options?: { floor?: number; limit?: number; maxChars?: number }): Promise<SearchResult>;
  /** The bench file a passage came from. */
  fileOf(documentId: string): string;
  stop(): Promise<void>;
}

export async function openKnowledgeBench({
  agent = false,
  env = {},
}: BenchServiceOptions = {}): Promise<KnowledgeBench> {
  // The offline embeddings even when an OpenAI key or base URL is in the environment.
  const bench = await startBenchService({
    agent,
    env: { KNOWLEDGE_EMBEDDINGS: 'offline', CREDITS_ONBOARDING: '0', ...env },
  });
  try {
    const { service, config } = bench;
    const account = await createBenchAccount(service, 'knowledge@example.com');
    const { authorization } = account;
    const files = new Map<string, string>();
    const uploadStarted = performance.now();
    for (const document of await loadDocuments()) {
      const form = new FormData();
      form.append('file', new File([document.bytes], document.name, { type: document.type }));
      const response = await fetch(`${service.url}/v1/documents`, {
        method: 'POST',
        headers: { authorization },
        body: form,
      });
      if (response.status !== 202)
        throw new Error(`uploading ${document.name}: ${response.status} ${await response.text()}`);
      const created = (await response.json()) as { document_id: string };
      files.set(created.document_id, document.name);
    }
    const documentIds = [...files.keys()];
    const chunks = await Promise.all(documentIds.map((id) => whenReady(service.url, authorization, id)));
    const uploadMs = performance.now() - uploadStarted;
    const { knowledge, database } = service.services;
    const floor = config.knowledge.similarityFloor ?? defaultSimilarityFloor(knowledge.embedder.model);
    return {
      bench,
      account,
      documentIds,
      floor,
      describe: () =>
        `database=${database.engine} embeddings=${knowledge.embedder.model} floor=${floor} documents=${files.size} passages=${chunks.reduce((a, b) => a + b, 0)} (uploaded and ready in ${Math.round(uploadMs)} ms)`,
      search: (query, options = {}) =>
        knowledge.search({ accountId: account.accountId, documentIds, query, ...options }),
      fileOf: (id) => files.get(id) ?? id,
      stop: () => bench.stop(),
    };
  } catch (error) {
    await bench.stop();
    throw error;
  }
}

/** The document's passage count once `ready`; its detail if it failed. */
async function whenReady(url: string, authorization: string, id: string): Promise<number> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  while (performance.now() < deadline) {
    const response = await fetch(`${url}/v1/documents/${id}`, { headers: { authorization } });
    const document = (await response.json()) as { status: string; detail?: string | null; chunks?: number };
    if (document.status === 'ready') return document.chunks ?? 0;
    if (document.status === 'failed') throw new Error(`document ${id} failed: ${document.detail}`);
    await Bun.sleep(100);
  }
  throw new Error(`document ${id} was not ready within ${READY_TIMEOUT_MS / 1000} s`);
}
