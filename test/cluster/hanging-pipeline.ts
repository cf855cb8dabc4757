// PIPELINE_MODULES for one API process of the cluster test: the built-in pipeline, whose
// training number HANG_ON_TRAINING never finishes, so the test can kill that process mid-retrain.
import { builtinTraining } from '../../src/pipelines/builtin/index.ts';
import type { Pipeline } from '../../src/pipelines/types.ts';

const hangOn = Number(process.env.HANG_ON_TRAINING ?? 0);
let trainings = 0;

const pipeline: Pipeline = {
  ...builtinTraining,
  async train(input) {
    if (++trainings === hangOn) await new Promise(() => {});
    return builtinTraining.train(input);
  },
};
export default pipeline;
