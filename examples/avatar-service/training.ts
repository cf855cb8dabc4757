// The control plane's half of the example pipeline `example-avatar-service` and its broken
// twin, loaded through PIPELINE_MODULES: training stores the photo (the service fetches it),
// as a hosted avatar needs nothing else.
import { renderImageVariants } from '../../src/media/index.ts';
import type { Pipeline } from '../../src/pipelines/index.ts';
import { AVATAR_SERVICE_DOWN_PIPELINE, AVATAR_SERVICE_PIPELINE } from './agent-pipeline.ts';

/** It stores the photo, as a hosted avatar needs nothing else. */
const servicePipeline = (id: string): Pipeline => ({
  id,
  description: 'Example avatar service (examples/avatar-service) joining the room as its own participant.',
  renders: { kind: 'avatar_service', provider: 'example' },
  async train({ image, store, prefix }) {
    const { normalized, render } = await renderImageVariants(image);
    await store.put(`${prefix}image.${normalized.ext}`, normalized.bytes, normalized.contentType);
    await store.put(`${prefix}render.png`, render.bytes, 'image/png');
    return {
      image: {
        key: `${prefix}image.${normalized.ext}`,
        contentType: normalized.contentType,
        width: normalized.width,
        height: normalized.height,
        variants: { render: { key: `${prefix}render.png`, width: render.width, height: render.height } },
      },
      training: { pipeline: id },
    };
  },
});

export default [servicePipeline(AVATAR_SERVICE_PIPELINE), servicePipeline(AVATAR_SERVICE_DOWN_PIPELINE)];
