// The control plane's half of the example pipeline `example-avatar-service` and its broken
// twin, loaded through PIPELINE_MODULES: training stores the photo (the service fetches it),
// as a hosted avatar needs nothing else.
import { photoOnly } from '../../src/pipelines/hosted/index.ts';
import { AVATAR_SERVICE_DOWN_PIPELINE, AVATAR_SERVICE_PIPELINE } from './agent-pipeline.ts';

const DESCRIPTION = 'Example avatar service (examples/avatar-service) joining the room as its own participant.';

export default [
  photoOnly(AVATAR_SERVICE_PIPELINE, DESCRIPTION, 'example'),
  photoOnly(AVATAR_SERVICE_DOWN_PIPELINE, DESCRIPTION, 'example'),
];
