// A real service process whose pipeline stops forever inside training call number
// HANG_ON_TRAINING (after writing its files), so a test can kill it mid-create or mid-retrain.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { builtinTraining } from '../../src/pipelines/builtin/index.ts';
import { PipelineRegistry } from '../../src/pipelines/registry.ts';
import { startService } from '../../src/server.ts';

const hangOn = Number(process.env.HANG_ON_TRAINING ?? 1);
const config = loadConfig();
let trainings = 0;
const service = await startService(config, {
  pipelines: new PipelineRegistry(
    [
      {
        ...builtinTraining,
        async train(input) {
          const result = await builtinTraining.train(input);
          if (++trainings === hangOn) {
            writeFileSync(join(config.dataDir, 'training-hung'), input.identityId);
            await new Promise(() => {});
          }
          return result;
        },
      },
    ],
    'builtin',
  ),
});
const account = process.env.API_KEY
  ? { api_key: process.env.API_KEY }
  : await service.services.operations.createAccount({ email: `hang-${Date.now()}@example.com`, credits: 1000 });
console.log(JSON.stringify({ url: service.url, ...account }));
