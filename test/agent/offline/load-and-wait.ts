// Run as a child by lifecycle.test.ts: loads the offline models, says so, then waits to be killed.
import { loadOfflineModels } from '../../../agent/providers/offline/index.ts';
import { loadProviders } from '../../../src/config.ts';

await loadOfflineModels({ modelsDir: loadProviders(process.env).modelsDir });
process.stdout.write('loaded\n');
setInterval(() => {}, 60_000);
