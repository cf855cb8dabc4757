// The preset voices of GET /v1/voices. Each maps to an ElevenLabs premade voice (used when
// ElevenLabs is configured) and to an offline profile for espeak-ng. Whether a voice is
// multilingual is a property of the voice, not of the deployment: an identity's allowed
// language modes do not change when an operator adds or removes a provider key.
import { DEFAULT_ELEVENLABS_VOICE_ID } from '../contract/dispatch.ts';
import { SPOKEN_LANGUAGES, type SpokenLanguage } from '../contract/languages.ts';
import type { IdentityVoice, VoiceProfile } from './voice.ts';

export interface PresetVoice {
  id: string;
  name: string;
  description: string;
  gender: 'female' | 'male';
  multilingual: boolean;
  /** The pinned language modes it speaks (`auto` needs all of them). */
  languages: SpokenLanguage[];
  /** An ElevenLabs premade voice: present in every ElevenLabs account. */
  elevenlabsVoiceId: string;
  profile: VoiceProfile;
}

const ALL_LANGUAGES: SpokenLanguage[] = [...SPOKEN_LANGUAGES];

/** The voice of an identity with neither uploaded audio nor a chosen preset (stored as a null voice). */
export const DEFAULT_VOICE: PresetVoice = {
  id: 'default',
  name: 'Default',
  description:
    'The voice of identities without uploaded audio or a chosen preset: a neutral American English voice. English only, so every language mode except `en` needs another voice.',
  gender: 'female',
  multilingual: false,
  languages: ['en'],
  elevenlabsVoiceId: DEFAULT_ELEVENLABS_VOICE_ID, // Rachel
  profile: { pitchHz: 190, wordsPerMinute: 165 },
};

export const PRESET_VOICES: readonly PresetVoice[] = [
  DEFAULT_VOICE,
  {
    id: 'aria',
    name: 'Aria',
    description: 'A warm, expressive female voice; speaks English, Spanish, Polish and Ukrainian.',
    gender: 'female',
    multilingual: true,
    languages: ALL_LANGUAGES,
    elevenlabsVoiceId: '9BWtsMINqrJLrRacOk9x',
    profile: { pitchHz: 210, wordsPerMinute: 170 },
  },
  {
    id: 'adam',
    name: 'Adam',
    description: 'A deep, calm male voice; speaks English, Spanish, Polish and Ukrainian.',
    gender: 'male',
    multilingual: true,
    languages: ALL_LANGUAGES,
    elevenlabsVoiceId: 'pNInz6obpgDQGcFmaJgB',
    profile: { pitchHz: 105, wordsPerMinute: 150 },
  },
  {
    id: 'roger',
    name: 'Roger',
    description: 'A confident, casual male voice for English-only avatars.',
    gender: 'male',
    multilingual: false,
    languages: ['en'],
    elevenlabsVoiceId: 'CwhRBWXzGAHq8TQ4Fs17',
    profile: { pitchHz: 120, wordsPerMinute: 165 },
  },
];

export function findPreset(id: string): PresetVoice | undefined {
  return PRESET_VOICES.find((voice) => voice.id === id);
}

/** The stored voice for a preset id: null for the default voice; undefined when unknown. */
export function presetVoice(id: string): IdentityVoice | null | undefined {
  const preset = findPreset(id);
  if (!preset) return undefined;
  if (preset.id === DEFAULT_VOICE.id) return null;
  return {
    presetId: preset.id,
    multilingual: preset.multilingual,
    elevenlabsVoiceId: preset.elevenlabsVoiceId,
    profile: { ...preset.profile },
  };
}
