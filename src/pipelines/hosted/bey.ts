// Beyond Presence's hosted avatar, the control plane's half of pipeline `bey`
// (agent/pipelines/bey starts its sessions). Bey trains its avatars from video in its own
// studio, not from one photo: an identity names one of the operator's Bey avatars
// (`provider_avatar_id`, required), which must exist and be trained (`available`) at create.
// The photo is still trained for the built-in talking head, the fallback when Bey fails.

import type { HostedAvatar } from '../../config.ts';
import { BEY_PIPELINE_ID } from '../../contract/index.ts';
import { invalid } from '../../http/errors.ts';
import { builtinTraining } from '../builtin/index.ts';
import type { Pipeline } from '../types.ts';
import { lookUpAvatar, type ProviderApi } from './provider-api.ts';

export function beyPipeline(settings: HostedAvatar<string>): Pipeline {
  const api: ProviderApi = {
    name: 'Beyond Presence',
    baseUrl: settings.apiUrl,
    headers: { 'x-api-key': settings.apiKey },
  };
  return {
    ...builtinTraining,
    id: BEY_PIPELINE_ID,
    description: 'Beyond Presence: a hosted neural avatar, one of your Bey avatars named by provider_avatar_id.',
    renders: { kind: 'avatar_service', provider: 'bey' },
    providerAvatars: {
      required: true,
      async check(id) {
        const avatar = await lookUpAvatar(api, id);
        if (avatar.status !== undefined && avatar.status !== 'available') {
          throw invalid(
            ['body', 'provider_avatar_id'],
            `Beyond Presence avatar "${id.slice(0, 100)}" is ${String(avatar.status)}, not available yet`,
            'provider_avatar_unavailable',
          );
        }
      },
    },
    async train(input) {
      const trained = await builtinTraining.train(input);
      return { ...trained, training: { ...trained.training, provider_avatar_id: input.providerAvatarId } };
    },
  };
}
