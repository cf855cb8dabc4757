// OpenAI's embeddings (docs: knowledge.md): POST {baseUrl}/embeddings in its wire format,
// asking text-embedding-3-* for 384 dimensions, the size of the offline model's vectors.
import { EMBEDDING_DIMENSIONS, type Embedder, EmbeddingUnavailable } from './embedder.ts';

/** Texts per OpenAI request: well under its 2048 inputs and 300k tokens (passages are ~800 characters). */
const OPENAI_BATCH = 96;
const OPENAI_TIMEOUT_MS = 30_000;

/** POST {baseUrl}/embeddings, OpenAI's wire format, asking for 384 dimensions (text-embedding-3-*). */
export class OpenAIEmbedder implements Embedder {
  readonly dimensions = EMBEDDING_DIMENSIONS;
  readonly model: string;
  readonly #url: string;
  readonly #apiKey: string;

  constructor(provider: { apiKey: string; baseUrl: string | undefined; model: string }) {
    this.model = provider.model;
    this.#url = `${provider.baseUrl ?? 'https://api.openai.com/v1'}/embeddings`;
    this.#apiKey = provider.apiKey;
  }

  async embedQuery(text: string): Promise<Float32Array> {
    return (await this.#embed([text]))[0]!;
  }

  async embedPassages(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += OPENAI_BATCH) {
      signal?.throwIfAborted();
      vectors.push(...(await this.#embed(texts.slice(start, start + OPENAI_BATCH), signal)));
    }
    return vectors;
  }

  async #embed(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const timeout = AbortSignal.timeout(OPENAI_TIMEOUT_MS);
    let answer: Response;
    try {
      answer = await fetch(this.#url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.#apiKey ? { authorization: `Bearer ${this.#apiKey}` } : {}),
        },
        body: JSON.stringify({ model: this.model, input, dimensions: EMBEDDING_DIMENSIONS, encoding_format: 'float' }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (error) {
      signal?.throwIfAborted();
      throw new EmbeddingUnavailable(`the embeddings request failed: ${(error as Error).message}`);
    }
    if (!answer.ok) {
      const body = (await answer.text().catch(() => '')).slice(0, 300);
      throw new EmbeddingUnavailable(`the embeddings API answered ${answer.status}: ${body}`);
    }
    const { data } = (await answer.json()) as { data?: { index: number; embedding: number[] }[] };
    if (!Array.isArray(data) || data.length !== input.length)
      throw new EmbeddingUnavailable(`the embeddings API answered ${data?.length ?? 'no'} vectors for ${input.length}`);
    return data
      .toSorted((a, b) => a.index - b.index)
      .map(({ embedding }) => {
        if (embedding.length !== EMBEDDING_DIMENSIONS)
          throw new EmbeddingUnavailable(
            `${this.model} answered ${embedding.length} dimensions, not ${EMBEDDING_DIMENSIONS}: use a model that takes \`dimensions\` (text-embedding-3-*) or KNOWLEDGE_EMBEDDINGS=offline`,
          );
        return normalised(Float32Array.from(embedding));
      });
  }

  async close(): Promise<void> {}
}

/** OpenAI's vectors are unit length already; a compatible server's may not be. */
function normalised(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  if (norm > 0 && Math.abs(norm - 1) > 1e-4) for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
}
