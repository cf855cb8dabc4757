// SmolLM2's sentence reading (sentence-end.ts) for `transcript` turns with cloud replies, run in
// the worker's inference process (agents-adapter/inference.ts): one model per worker, loaded
// once as the worker starts, instead of one in every job process (~0.65 s of CPU and the
// model's memory each, and a suite forks hundreds). A job asks it over agents' IPC (a few ms).
// With offline replies the job has the model already and reads there (offline/index.ts).
import { loadProviders } from '../../../src/config.ts';
import type { InferenceRunner } from '../../agents-adapter/index.ts';
import { agentLog } from '../../logging.ts';
import { loadOfflineSentenceEnd, type SentenceEnd } from './sentence-end.ts';

/** The inference method's name, as the worker registers it and the jobs ask for it. */
export const SENTENCE_END_INFERENCE = 'likeness.sentence_end';

export interface SentenceEndRequest {
  text: string;
}

export default class SentenceEndRunner implements InferenceRunner<SentenceEndRequest, number> {
  #reader: SentenceEnd | undefined;

  async initialize(): Promise<void> {
    try {
      this.#reader = await loadOfflineSentenceEnd(loadProviders(process.env).modelsDir);
    } catch (error) {
      // Without the models (a cloud-only install) every reading fails and the word list decides.
      agentLog().warn({ err: error }, 'end-of-turn detection reads the word list only');
    }
  }

  async run({ text }: SentenceEndRequest): Promise<number> {
    if (!this.#reader) throw new Error('no sentence reader in this worker');
    return this.#reader.probability(text);
  }

  async close(): Promise<void> {
    await this.#reader?.close();
  }
}
