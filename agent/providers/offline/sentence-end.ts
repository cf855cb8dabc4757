// How likely the visitor's words so far end a sentence, read by SmolLM2 (the end-of-turn
// detector's second opinion, agent/conversation/transcript-turns.ts). The text goes in as the
// start of a user message, capitalised and without its final punctuation (Whisper ends broken-off
// phrases with "?" as readily as whole ones); the answer is the model's probability that the next token
// closes the sentence. Measured on the evaluation's questions: whole English questions 0.06-0.93,
// "Which continent is Brazil in" 0.53 included; halves cut at a pause ("What is the capital
// of", "Which country has") at most 0.003. Polish and Ukrainian halves score like whole
// questions, so the detector asks only in English.
import type { LlamaContext, LlamaContextSequence, LlamaModel, LlamaToken } from './llama.ts';
import { openLanguageModels, readManifest } from './models-folder.ts';

/** Tokens that end a sentence or the message. */
const ENDINGS = ['.', '?', '!', '<|im_end|>'];
const TRAILING_PUNCTUATION = /[\s.?!…,;:]+$/u;

export class SentenceEnd {
  readonly #model: LlamaModel;
  readonly #context: LlamaContext;
  readonly #sequence: LlamaContextSequence;
  readonly #endings: LlamaToken[];
  readonly #release: () => Promise<void>;
  /** One reading at a time: they share the sequence. */
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(model: LlamaModel, context: LlamaContext, endings: LlamaToken[], release: () => Promise<void>) {
    this.#model = model;
    this.#context = context;
    this.#sequence = context.getSequence();
    this.#endings = endings;
    this.#release = release;
  }

  /**
   * Its own small context on `model` (one thread: a reading is ~20 tokens), so the replies'
   * cached prompt stays. `release` also frees what the caller loaded for it alone.
   */
  static async on(model: LlamaModel, release: () => Promise<void> = async () => {}): Promise<SentenceEnd> {
    // Checked before a context exists, so a model without these tokens leaves nothing behind.
    const endings = ENDINGS.map((ending) => model.tokenize(ending, true))
      .filter((tokens) => tokens.length === 1)
      .map((tokens) => tokens[0]!);
    if (endings.length !== ENDINGS.length)
      throw new Error('the language model has no single token for some sentence ending');
    const context = await model.createContext({ contextSize: 256, threads: 1, sequences: 1 });
    return new SentenceEnd(model, context, endings, release);
  }

  /** The probability that `text` is a whole sentence (the next token ends it). */
  probability(text: string): Promise<number> {
    const reading = this.#queue.then(() => this.#read(text));
    this.#queue = reading.catch(() => {});
    return reading;
  }

  async #read(text: string): Promise<number> {
    const bare = text.trim().replace(TRAILING_PUNCTUATION, '');
    if (!bare) return 1;
    // A message starts with a capital: "which continent is Brazil in" read 0.02, "Which …" 0.53
    // (Whisper writes either).
    const words = bare.charAt(0).toLocaleUpperCase() + bare.slice(1);
    const tokens = this.#model.tokenize(`<|im_start|>user\n${words}`, true);
    await this.#sequence.clearHistory();
    const input = tokens.map((token, index) =>
      index === tokens.length - 1 ? ([token, { generateNext: { probabilities: true } }] as const) : token,
    );
    const output = await this.#sequence.controlledEvaluate(input as never);
    const next = output[tokens.length - 1]?.next?.probabilities;
    if (!next) throw new Error('the language model returned no next-token probabilities');
    return this.#endings.reduce((sum, token) => sum + (next.get(token) ?? 0), 0);
  }

  async close(): Promise<void> {
    await this.#queue;
    await this.#context.dispose();
    await this.#release();
  }
}

/**
 * SmolLM2 for end-of-turn detection alone, when the replies come from a cloud model (the
 * offline models' `sentenceEnd` shares its node-llama-cpp otherwise).
 */
export async function loadOfflineSentenceEnd(modelsDir: string): Promise<SentenceEnd> {
  const manifest = await readManifest(modelsDir);
  const { models, release } = await openLanguageModels(manifest, modelsDir, [manifest.reader]);
  try {
    return await SentenceEnd.on(models[0]!, release);
  } catch (error) {
    await release();
    throw error;
  }
}
