// The control plane's half of the hosted avatars (agent/pipelines/<id> is the other): each is a
// pipeline once its key is set. Every one trains the built-in face as well, so a session whose
// provider fails falls back to the talking head rather than a still photo.

import type { HostedAvatarSettings } from '../../config.ts';
import { LEMONSLICE_PIPELINE_ID } from '../../contract/index.ts';
import { renderImageVariants } from '../../media/index.ts';
import { builtinTraining } from '../builtin/index.ts';
import type { Pipeline } from '../types.ts';
import { anamPipeline } from './anam.ts';
import { beyPipeline } from './bey.ts';

export function hostedPipelines(settings: HostedAvatarSettings): Pipeline[] {
  const pipelines: Pipeline[] = [];
  // LemonSlice animates the photo itself, fetched by URL at session start.
  if (settings.lemonslice) {
    pipelines.push({
      ...builtinTraining,
      id: LEMONSLICE_PIPELINE_ID,
      description: 'LemonSlice: a hosted avatar animated from the photo.',
      renders: { kind: 'avatar_service', provider: 'lemonslice' },
    });
  }
  if (settings.anam) pipelines.push(anamPipeline(settings.anam));
  if (settings.bey) pipelines.push(beyPipeline(settings.bey));
  return pipelines;
}

/** A pipeline whose avatar service needs only the photo: training stores it (and its rendition). */
export function photoOnly(id: string, description: string, provider: string): Pipeline {
  return {
    id,
    description,
    renders: { kind: 'avatar_service', provider },
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
  };
}
