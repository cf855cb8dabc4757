// Voices as response bodies: a preset as a /v1/voices item, and an identity's voice as its `voice_id`.
import { DEFAULT_VOICE, type PresetVoice } from './catalogue.ts';
import type { IdentityVoice } from './voice.ts';

export function voiceItem(voice: PresetVoice) {
  return {
    voice_id: voice.id,
    name: voice.name,
    description: voice.description,
    gender: voice.gender,
    multilingual: voice.multilingual,
    languages: [...voice.languages],
  };
}

/** The identity response's `voice_id`: the preset's id, `default`, or null for a voice cloned from its audio. */
export function voiceIdOf(voice: IdentityVoice | null | undefined): string | null {
  if (!voice) return DEFAULT_VOICE.id;
  return voice.presetId;
}
