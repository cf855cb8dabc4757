// A pipeline module as an operator would list it in PIPELINE_MODULES: the control plane's
// half of a hosted avatar provider. It never trains in these tests.
import type { Pipeline } from '../../../src/pipelines/types.ts';

const acme: Pipeline = {
  id: 'acme-avatars',
  description: 'Acme’s hosted avatars, joining the room as their own participant.',
  renders: { kind: 'avatar_service', provider: 'acme' },
  train: () => Promise.reject(new Error('not trained in this test')),
};

export default acme;
