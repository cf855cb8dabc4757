// Voices (docs/api.md#voices): the preset catalogue served at GET /v1/voices, and how an
// identity gets its voice — a preset (catalogue.ts), or a clone of its uploaded sample
// (clones.ts: ElevenLabs instant cloning when configured; always an offline profile measured
// from the sample, profile.ts). The identity stores the result as `IdentityVoice` (voice.ts);
// null is the default voice.
import { t } from 'elysia';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import type { Database } from '../db/index.ts';
import { errorResponses } from '../http/errors.ts';
import { PRESET_VOICES } from './catalogue.ts';
import { VoiceItem } from './contract.ts';
import { voiceItem } from './presenter.ts';

export { DEFAULT_VOICE, findPreset, PRESET_VOICES, type PresetVoice, presetVoice } from './catalogue.ts';
export { Voices } from './clones.ts';
export type { VoiceItem } from './contract.ts';
export { ElevenLabsVoices, VoiceProviderError } from './elevenlabs.ts';
export { voiceIdOf } from './presenter.ts';
export { measureVoiceProfile, PROFILE_LIMITS } from './profile.ts';
export { sampleProfile, voiceChoiceProblems } from './validation.ts';
export type { IdentityVoice, VoiceProfile } from './voice.ts';

export function voiceRoutes<const Prefix extends string>(db: Database, audience: Audience<Prefix>) {
  return authenticatedRoutes(db, audience, '/voices', 'Voices').get('', () => PRESET_VOICES.map(voiceItem), {
    response: { 200: t.Array(VoiceItem), ...errorResponses(401) },
    detail: {
      operationId: 'listVoices',
      summary: 'List the preset voices',
      description:
        'An identity takes a preset with `voice_id` instead of uploading `audio`. `default` is the voice of identities with neither.',
    },
  });
}
