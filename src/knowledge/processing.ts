// A document's processing, in the background after its upload answered 202: its text
// (extraction.ts), its passages (chunking.ts), their embeddings, then `ready` with its chunks,
// or `failed` with a detail the user can act on. Either change commits with its webhook event
// (document.ready / document.failed). While it works the process keeps the document's lease
// (`worked_until`) in the future; a process that died leaves it to run out, and the sweep
// (failInterruptedDocuments) then marks the document failed: the upload is not kept to resume.
import { and, eq, lt } from 'drizzle-orm';
import type { Database } from '../db/index.ts';
import { log } from '../logging/index.ts';
import { writeEvent } from '../webhooks/index.ts';
import { chunkText } from './chunking.ts';
import { type Embedder, EmbeddingUnavailable } from './embedder.ts';
import { DocumentProblem, documentText } from './extraction.ts';
import type { DocumentType } from './file-types.ts';
import { documents } from './schema.ts';
import { insertChunks, searchCapabilities } from './store.ts';

export const INTERRUPTED = 'Processing was interrupted; upload the document again';
const UNAVAILABLE =
  'The embeddings could not be computed (the service is unavailable); upload the document again later';
/** Passages embedded between two checks that the document is still wanted. */
const EMBED_GROUP = 32;

export interface ProcessingDeps {
  db: Database;
  embedder: Embedder;
  /** The lease held on a document while processing it (WORK_LEASE_SECONDS). */
  workLeaseSeconds: number;
}

export interface AcceptedDocument {
  id: string;
  accountId: string;
  name: string;
  contentType: DocumentType;
}

/** Deleted, or failed by a sweep that thought this process dead: nothing more to write. */
class NoLongerWanted extends Error {}

export class DocumentProcessing {
  readonly #running = new Map<string, { done: Promise<void>; abort: AbortController }>();

  constructor(private readonly deps: ProcessingDeps) {}

  leaseUntil(): Date {
    return new Date(Date.now() + this.deps.workLeaseSeconds * 1000);
  }

  /** Starts processing an accepted document (its row already reads `processing`, leased until leaseUntil()). */
  start(document: AcceptedDocument, bytes: Uint8Array): void {
    const abort = new AbortController();
    const done = this.#process(document, bytes, abort.signal)
      .catch((error) => log.error({ err: error, document_id: document.id }, 'processing a document failed'))
      .finally(() => this.#running.delete(document.id));
    this.#running.set(document.id, { done, abort });
  }

  /** A document deleted mid-processing: its work stops at the next check. */
  stop(documentId: string): void {
    this.#running.get(documentId)?.abort.abort();
  }

  /** Resolves once no document is processing here (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#running.size) await Promise.all([...this.#running.values()].map((r) => r.done));
  }

  /** Shutdown: work in progress stops; its documents' leases run out and the sweep fails them. */
  async close(): Promise<void> {
    for (const running of this.#running.values()) running.abort.abort();
    await this.idle();
  }

  async #process(document: AcceptedDocument, bytes: Uint8Array, signal: AbortSignal): Promise<void> {
    const { db, embedder } = this.deps;
    const renewing = setInterval(
      () =>
        void this.#renewLease(document.id).then(
          (held) => held || this.stop(document.id),
          (error) => log.warn({ err: error, document_id: document.id }, 'renewing a document lease failed'),
        ),
      (this.deps.workLeaseSeconds * 1000) / 3,
    );
    try {
      const passages = chunkText(await documentText(bytes, document.contentType));
      const embeddings: Float32Array[] = [];
      for (let start = 0; start < passages.length; start += EMBED_GROUP) {
        signal.throwIfAborted();
        embeddings.push(...(await embedder.embedPassages(passages.slice(start, start + EMBED_GROUP), signal)));
      }
      signal.throwIfAborted();
      // Read before the transaction: PGlite's one connection would wait for it to end.
      const { path } = await searchCapabilities(db);
      await db.transaction(async (tx) => {
        const [ready] = await tx
          .update(documents)
          .set({
            status: 'ready',
            chunkCount: passages.length,
            embeddingModel: embedder.model,
            workedUntil: null,
            updatedAt: new Date(),
          })
          .where(and(eq(documents.id, document.id), eq(documents.status, 'processing')))
          .returning({ id: documents.id });
        if (!ready) throw new NoLongerWanted();
        await insertChunks(
          tx,
          path,
          document,
          passages.map((text, i) => ({ text, embedding: embeddings[i]! })),
        );
        await writeEvent(tx, document.accountId, 'document.ready', {
          document_id: document.id,
          name: document.name,
          chunks: passages.length,
        });
      });
    } catch (error) {
      if (error instanceof NoLongerWanted || signal.aborted) return;
      if (error instanceof EmbeddingUnavailable)
        log.error({ err: error, document_id: document.id }, 'a document could not be embedded');
      else if (!(error instanceof DocumentProblem))
        log.error({ err: error, document_id: document.id }, 'processing a document failed');
      const detail = error instanceof DocumentProblem ? error.message : UNAVAILABLE;
      await failDocument(db, document, detail);
    } finally {
      clearInterval(renewing);
    }
  }

  /** True while the document is still this process's to finish. */
  async #renewLease(documentId: string): Promise<boolean> {
    const held = await this.deps.db
      .update(documents)
      .set({ workedUntil: this.leaseUntil() })
      .where(and(eq(documents.id, documentId), eq(documents.status, 'processing')))
      .returning({ id: documents.id });
    return held.length > 0;
  }
}

/** `failed` with its detail and the document.failed event, if it was still processing. */
async function failDocument(
  db: Database,
  document: { id: string; accountId: string; name: string },
  detail: string,
  condition = and(eq(documents.id, document.id), eq(documents.status, 'processing')),
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [failed] = await tx
      .update(documents)
      .set({ status: 'failed', detail, workedUntil: null, updatedAt: new Date() })
      .where(condition)
      .returning({ id: documents.id });
    if (!failed) return false;
    await writeEvent(tx, document.accountId, 'document.failed', {
      document_id: document.id,
      name: document.name,
      detail,
    });
    return true;
  });
}

/** The sweep: documents whose processing process died (their lease ran out) fail, each with its event. */
export async function failInterruptedDocuments(db: Database): Promise<number> {
  const now = new Date();
  const expired = await db
    .select({ id: documents.id, accountId: documents.accountId, name: documents.name })
    .from(documents)
    .where(and(eq(documents.status, 'processing'), lt(documents.workedUntil, now)));
  let failed = 0;
  for (const document of expired) {
    // Again with the lease's condition: a process that renewed it meanwhile keeps its document.
    const condition = and(
      eq(documents.id, document.id),
      eq(documents.status, 'processing'),
      lt(documents.workedUntil, now),
    );
    if (await failDocument(db, document, INTERRUPTED, condition)) failed++;
  }
  return failed;
}
