// A document's processing, in the background after its upload answered 202. The upload's bytes
// wait in a file of this process's own folder, their turn taken fairly across accounts
// (processing-queue.ts), one document at a time. Its text and passages come from an extraction
// process (isolated-extraction.ts), never this event loop; then their embeddings; then `ready`
// with its chunks, or `failed` with a detail the user can act on. The whole of it has a
// wall-clock budget and bounds on what it may produce (KnowledgeSettings.processing; the
// account's passages together too). Either change commits with its webhook event. While it
// waits or works the process keeps the document's lease (`worked_until`) in the future; a
// process that died leaves it to run out, and the sweep (failInterruptedDocuments) then marks
// the document failed: the upload is not kept to resume.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { DocumentProcessingBounds } from '../config.ts';
import type { Database, Queryable } from '../db/index.ts';
import { keepRenewing, leaseRanOut, leaseUntil } from '../db/work-lease.ts';
import { log } from '../logging/index.ts';
import { writeEvent } from '../webhooks/index.ts';
import { type Embedder, EmbeddingUnavailable } from './embedder.ts';
import { accountFull, DocumentProblem, tooSlow } from './extraction-bounds.ts';
import type { DocumentType } from './file-types.ts';
import { extractPassages } from './isolated-extraction.ts';
import { FairQueue } from './processing-queue.ts';
import { documents } from './schema.ts';
import { deleteUnreadyChunks, insertChunks, searchCapabilities } from './store.ts';

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
  bounds: DocumentProcessingBounds;
  maxPassagesPerAccount: number;
}

export interface AcceptedDocument {
  id: string;
  accountId: string;
  name: string;
  contentType: DocumentType;
}

interface Held extends AcceptedDocument {
  file: string;
  abort: AbortController;
}

/** Deleted, or failed by a sweep that thought this process dead: nothing more to write. */
class NoLongerWanted extends Error {}

export class DocumentProcessing {
  readonly #waiting = new FairQueue<Held>();
  #running: Held | undefined;
  #turn: Promise<void> = Promise.resolve();
  #folder: Promise<string> | undefined;
  #stopRenewing: (() => void) | undefined;

  constructor(private readonly deps: ProcessingDeps) {}

  /** The lease's end for a document taken now (on the database's clock). */
  leaseUntil(): SQL {
    return leaseUntil(this.deps.workLeaseSeconds);
  }

  /** Where an accepted document's bytes wait: written before the upload answers. */
  async store(documentId: string, bytes: Uint8Array): Promise<string> {
    this.#folder ??= mkdtemp(join(tmpdir(), 'likeness-documents-'));
    const file = join(await this.#folder, documentId);
    await writeFile(file, bytes);
    return file;
  }

  /** A stored upload whose row was refused. */
  async discard(file: string): Promise<void> {
    await rm(file, { force: true });
  }

  /** Queues a stored document (its row already reads `processing`, leased until leaseUntil()). */
  start(document: AcceptedDocument, file: string): void {
    this.#waiting.push({ ...document, file, abort: new AbortController() });
    this.#stopRenewing ??= keepRenewing(this.deps.workLeaseSeconds, () => this.#renewLeases(), { work: 'documents' });
    if (!this.#running) this.#turn = this.#next();
  }

  /** A document deleted mid-processing: its work stops at the next check, or it leaves the queue. */
  stop(documentId: string): void {
    if (this.#running?.id === documentId) this.#running.abort.abort();
    for (const held of this.#waiting.remove((held) => held.id === documentId)) void rm(held.file, { force: true });
  }

  /** Resolves once no document is waiting or processing here (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#running || this.#waiting.size) await this.#turn;
  }

  /** Shutdown: work stops; its documents' leases run out and the sweep fails them. */
  async close(): Promise<void> {
    for (const held of this.#waiting.remove(() => true)) void rm(held.file, { force: true });
    this.#running?.abort.abort();
    await this.#turn;
    this.#stopRenewing?.();
    const folder = this.#folder;
    if (folder !== undefined) await rm(await folder, { recursive: true, force: true });
  }

  async #next(): Promise<void> {
    for (let held = this.#waiting.shift(); held; held = this.#waiting.shift()) {
      this.#running = held;
      await this.#process(held)
        .catch((error) => log.error({ err: error, document_id: held!.id }, 'processing a document failed'))
        .finally(() => rm(held!.file, { force: true }));
    }
    this.#running = undefined;
    this.#stopRenewing?.();
    this.#stopRenewing = undefined;
  }

  async #process(document: Held): Promise<void> {
    const { db, embedder, bounds } = this.deps;
    const aborted = document.abort.signal;
    // The budget is spent by the extraction's CPU time (isolated-extraction.ts says why), then by
    // the wall time of the rest: the embeddings, the writes.
    let overBudget: AbortSignal | undefined;
    try {
      const { passages, cpuSeconds } = await extractPassages(
        document.file,
        { type: document.contentType, bounds },
        { seconds: bounds.seconds, memoryBytes: bounds.memoryBytes },
        aborted,
      );
      overBudget = AbortSignal.timeout(Math.max(0, bounds.seconds - cpuSeconds) * 1000);
      const signal = AbortSignal.any([aborted, overBudget]);
      // Before the embeddings, which cost the most: an account already full learns it at once.
      await this.#checkAccountRoom(db, document, passages.length);
      const embeddings: Float32Array[] = [];
      for (let start = 0; start < passages.length; start += EMBED_GROUP) {
        signal.throwIfAborted();
        embeddings.push(...(await embedder.embedPassages(passages.slice(start, start + EMBED_GROUP), signal)));
      }
      signal.throwIfAborted();
      const { path } = await searchCapabilities(db);
      await deleteUnreadyChunks(db, document.id); // an earlier attempt's, cut short by a restart
      const chunks = passages.map((text, i) => ({ text, embedding: embeddings[i]! }));
      await insertChunks(db, path, document, chunks, signal);
      await db.transaction(async (tx) => {
        await this.#checkAccountRoom(tx, document, passages.length);
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
        await writeEvent(tx, document.accountId, 'document.ready', {
          document_id: document.id,
          name: document.name,
          chunks: passages.length,
        });
      });
    } catch (error) {
      // Whatever passages were stored go with the attempt (a deleted document's went with it).
      await deleteUnreadyChunks(db, document.id).catch((err) =>
        log.error({ err, document_id: document.id }, "a document's passages could not be deleted"),
      );
      if (error instanceof NoLongerWanted || aborted.aborted) return;
      const problem =
        error instanceof DocumentProblem ? error : overBudget?.aborted ? tooSlow(bounds.seconds) : undefined;
      if (error instanceof EmbeddingUnavailable)
        log.error({ err: error, document_id: document.id }, 'a document could not be embedded');
      else if (!problem) log.error({ err: error, document_id: document.id }, 'processing a document failed');
      await failDocument(db, document, problem?.message ?? UNAVAILABLE);
    }
  }

  /** Fails with accountFull when these passages would take the account past its bound. */
  async #checkAccountRoom(db: Queryable, document: AcceptedDocument, passages: number): Promise<void> {
    const [held] = await db
      .select({ passages: sql<number>`coalesce(sum(${documents.chunkCount}), 0)::int` })
      .from(documents)
      .where(and(eq(documents.accountId, document.accountId), eq(documents.status, 'ready')));
    if ((held?.passages ?? 0) + passages > this.deps.maxPassagesPerAccount)
      throw accountFull(this.deps.maxPassagesPerAccount);
  }

  /** Every document held here stays this process's; one deleted or failed by a sweep stops. */
  async #renewLeases(): Promise<void> {
    const held = [...this.#waiting, ...(this.#running ? [this.#running] : [])];
    if (held.length === 0) return;
    const kept = await this.deps.db
      .update(documents)
      .set({ workedUntil: this.leaseUntil() })
      .where(
        and(
          inArray(
            documents.id,
            held.map((h) => h.id),
          ),
          eq(documents.status, 'processing'),
        ),
      )
      .returning({ id: documents.id });
    const keptIds = new Set(kept.map((row) => row.id));
    for (const h of held) if (!keptIds.has(h.id)) this.stop(h.id);
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
  const expired = await db
    .select({ id: documents.id, accountId: documents.accountId, name: documents.name })
    .from(documents)
    .where(and(eq(documents.status, 'processing'), leaseRanOut(documents.workedUntil)));
  let failed = 0;
  for (const document of expired) {
    // Again with the lease's condition: a process that renewed it meanwhile keeps its document.
    const condition = and(
      eq(documents.id, document.id),
      eq(documents.status, 'processing'),
      leaseRanOut(documents.workedUntil),
    );
    if (await failDocument(db, document, INTERRUPTED, condition)) failed++;
  }
  return failed;
}
