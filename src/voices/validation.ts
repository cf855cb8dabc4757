// Checks of an identity form's voice beyond its schema's shape (docs/api.md#voices): a
// `voice_id` the catalogue knows and not sent with `audio`, and a sample with speech in it.
import type { FieldProblem } from '../http/errors.ts';
import { type InspectedAudio, MediaError } from '../media/index.ts';
import { findPreset, PRESET_VOICES } from './catalogue.ts';
import { measureVoiceProfile, SilentSample } from './profile.ts';
import type { VoiceProfile } from './voice.ts';

/** The 422 for a `voice_id` the catalogue does not know, or sent together with `audio`. */
export function voiceChoiceProblems(fields: { voice_id?: string; audio?: unknown }): FieldProblem[] {
  if (fields.voice_id === undefined) return [];
  if (fields.audio !== undefined) {
    return [
      {
        loc: ['body', 'voice_id'],
        msg: 'Send either audio (to clone a voice) or voice_id (a preset voice), not both',
        type: 'voice_conflict',
      },
    ];
  }
  if (!findPreset(fields.voice_id)) {
    return [
      {
        loc: ['body', 'voice_id'],
        msg: `Unknown voice "${fields.voice_id.slice(0, 100)}"; GET /v1/voices lists them: ${PRESET_VOICES.map((v) => v.id).join(', ')}`,
        type: 'unknown_voice',
      },
    ];
  }
  return [];
}

/** The offline profile of an uploaded sample; a sample without measurable speech is refused. */
export function sampleProfile(audio: InspectedAudio): VoiceProfile {
  try {
    return measureVoiceProfile(audio.pcm16kMono);
  } catch (error) {
    if (!(error instanceof SilentSample)) throw error;
    throw new MediaError(
      422,
      'audio',
      `${error.message}; upload a recording of the voice speaking.`,
      'audio.no_speech',
    );
  }
}
