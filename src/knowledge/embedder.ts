// What turns text into vectors for the documents' search: OpenAI's embeddings at 384
// dimensions (openai-embedder.ts) when the service has an OpenAI provider, else the offline
// multilingual-e5-small the bootstrap installed (offline-embedder.ts); service.ts chooses.
// Either way unit-length float32 vectors of 384 dimensions: a dot product is the cosine.

export const EMBEDDING_DIMENSIONS = 384;

export interface Embedder {
  /** Stored with each document: a query is only compared with documents embedded by the same model. */
  readonly model: string;
  readonly dimensions: typeof EMBEDDING_DIMENSIONS;
  /** A visitor's question (e5's `query:` side). */
  embedQuery(text: string): Promise<Float32Array>;
  /** A document's passages (e5's `passage:` side), one vector each, in order. */
  embedPassages(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** The embedder could not answer (a model not installed, the provider down): the user can only retry later. */
export class EmbeddingUnavailable extends Error {}
