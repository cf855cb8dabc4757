// The built-in CPU pipeline. Training today normalises the photo (EXIF orientation,
// metadata stripped) and stores the rendition the CPU renderer draws from.
import { renderImageVariants } from '../../identities/media/index.ts';
import type { Pipeline } from '../index.ts';

export const builtinPipeline: Pipeline = {
  id: 'builtin',
  description: 'Built-in CPU talking head: animates the uploaded photo itself.',
  async train({ image, store, prefix }) {
    const { normalized, render } = await renderImageVariants(image);
    const imageKey = `${prefix}image.${normalized.ext}`;
    const renderKey = `${prefix}render.png`;
    await store.put(imageKey, normalized.bytes, normalized.contentType);
    await store.put(renderKey, render.bytes, 'image/png');
    return {
      image: {
        key: imageKey,
        contentType: normalized.contentType,
        width: normalized.width,
        height: normalized.height,
        variants: { render: { key: renderKey, width: render.width, height: render.height } },
      },
      training: { pipeline: 'builtin', version: 1 },
    };
  },
};
