// Anam's hosted avatar, the control plane's half of pipeline `anam` (agent/pipelines/anam
// starts its sessions). Anam makes a "one-shot" avatar from one image, so training makes one
// from the photo's rendition unless the identity names an avatar of the operator's Anam
// account (`provider_avatar_id`, checked at create). The built-in training runs too: the
// talking head is the fallback when Anam fails a session. An avatar made from the photo is
// deleted at Anam with the identity or when a retrain replaces it.

import type { HostedAvatar } from '../../config.ts';
import { ANAM_PIPELINE_ID } from '../../contract/index.ts';
import { builtinTraining } from '../builtin/index.ts';
import { type Pipeline, providerAvatarOf } from '../types.ts';
import { callProvider, lookUpAvatar, type ProviderApi, providerFailure } from './provider-api.ts';

export function anamPipeline(settings: HostedAvatar<string>): Pipeline {
  const api: ProviderApi = {
    name: 'Anam',
    baseUrl: settings.apiUrl,
    headers: { authorization: `Bearer ${settings.apiKey}` },
  };
  return {
    ...builtinTraining,
    id: ANAM_PIPELINE_ID,
    description: 'Anam: a hosted neural avatar, made from the photo (or an Anam avatar named by provider_avatar_id).',
    renders: { kind: 'avatar_service', provider: 'anam' },
    providerAvatars: {
      required: false,
      async check(id) {
        await lookUpAvatar(api, id);
      },
    },
    async train(input) {
      const trained = await builtinTraining.train(input);
      if (input.providerAvatarId)
        return { ...trained, training: { ...trained.training, provider_avatar_id: input.providerAvatarId } };
      const render = trained.image.variants.render;
      const photo = render && (await input.store.get(render.key));
      if (!render || !photo) throw new Error('the photo’s rendition is missing');
      const form = new FormData();
      // No person's name leaves the service: the identity id is the avatar's name at Anam.
      form.set('displayName', `Likeness ${input.identityId}`);
      form.set('imageFile', new File([await photo.arrayBuffer()], 'portrait.png', { type: 'image/png' }));
      const response = await callProvider(api, 'POST', '/v1/avatars', form);
      // A refusal fails the training; its caller removes the files stored above.
      if (!response.ok) throw await providerFailure(api, response, 'make an avatar from the photo');
      const made = (await response.json().catch(() => ({}))) as { id?: unknown };
      if (typeof made.id !== 'string' || !made.id)
        throw await providerFailure(api, response, 'make an avatar from the photo (no id)');
      return { ...trained, training: { ...trained.training, provider_avatar_id: made.id, provider_avatar_made: true } };
    },
    async release(training) {
      const id = providerAvatarOf(training);
      if (!id || training.provider_avatar_made !== true) return;
      const response = await callProvider(api, 'DELETE', `/v1/avatars/${encodeURIComponent(id)}`);
      if (!response.ok && response.status !== 404) throw await providerFailure(api, response, 'delete the avatar');
    },
  };
}
