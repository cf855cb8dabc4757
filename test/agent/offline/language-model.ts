// The offline reply model a suite's tests share: loaded by the suite's beforeAll (the agents
// logger set up first, as the job does), closed by its afterAll. Needs the installed models.
import { afterAll, beforeAll } from 'bun:test';
import { initializeLogger } from '@livekit/agents';
import { loadOfflineLanguageModel, type OfflineLLM } from '../../../agent/providers/offline/index.ts';
import { loadProviders } from '../../../src/config.ts';

/** Loads the model with `options` (within `timeoutMs`) and hands it to `use` before the tests run. */
export function withOfflineLanguageModel(
  options: Parameters<typeof loadOfflineLanguageModel>[1],
  use: (model: OfflineLLM) => void,
  timeoutMs = 120_000,
): void {
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    initializeLogger({ pretty: false, level: 'warn' });
    const loaded = await loadOfflineLanguageModel(loadProviders(process.env).modelsDir, options);
    close = loaded.close;
    use(loaded.llm);
  }, timeoutMs);
  afterAll(async () => close?.());
}
