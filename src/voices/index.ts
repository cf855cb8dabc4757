// Voices (beyond the spec's "preset voice … not shown"): the preset catalogue served at
// GET /v1/voices, and how an identity gets its voice — a preset, or a clone of its uploaded
// sample (ElevenLabs instant cloning when configured; always an offline profile measured from
// the sample). The identity stores the result as `IdentityVoice`; null is the default voice.
import { and, eq, notExists } from 'drizzle-orm';
import { t } from 'elysia';
import { authenticatedRoutes, PUBLIC_API, type Audience } from '../auth/index.ts';
import type { CloudProvider } from '../config.ts';
import type { Database } from '../db/index.ts';
import { ApiError, type FieldProblem } from '../http/errors.ts';
import { ErrorResponse } from '../http/schemas.ts';
import { MediaError, type AudioKind, type InspectedAudio } from '../identities/media/index.ts';
import type { IdentityVoice, VoiceProfile } from '../identities/schema.ts';
import { DEFAULT_VOICE, PRESET_VOICES, findPreset, type PresetVoice } from './catalogue.ts';
import { ElevenLabsVoices, VoiceProviderError } from './elevenlabs.ts';
import { SilentSample, measureVoiceProfile } from './profile.ts';
import { sessions } from '../sessions/schema.ts';
import { voiceReleases } from './schema.ts';

export { DEFAULT_VOICE, PRESET_VOICES, findPreset, type PresetVoice } from './catalogue.ts';
export { ElevenLabsVoices, VoiceProviderError } from './elevenlabs.ts';
export { measureVoiceProfile, PROFILE_LIMITS } from './profile.ts';

const FILE_EXTENSIONS: Record<AudioKind, string> = { 'audio/wav': 'wav', 'audio/mpeg': 'mp3', 'audio/mp4': 'm4a' };

export const VoiceItem = t.Object({
  voice_id: t.String({ description: 'Send as `voice_id` when creating or updating an identity.' }),
  name: t.String(),
  description: t.String(),
  gender: t.String(),
  multilingual: t.Boolean({ description: 'Speaks every language mode; English-only voices allow only `en` sessions.' }),
  languages: t.Array(t.String(), { description: 'The pinned language modes it speaks.' }),
});

function voiceItem(voice: PresetVoice) {
  return {
    voice_id: voice.id,
    name: voice.name,
    description: voice.description,
    gender: voice.gender,
    multilingual: voice.multilingual,
    languages: [...voice.languages],
  };
}

export function voiceRoutes(db: Database, audience: Audience = PUBLIC_API) {
  return authenticatedRoutes(db, audience, '/voices', 'Voices')
    .get('', () => PRESET_VOICES.map(voiceItem), {
      response: { 200: t.Array(VoiceItem), 401: ErrorResponse },
      detail: {
        summary: 'List the preset voices',
        description:
          'An identity takes a preset with `voice_id` instead of uploading `audio`. `default` is the voice of identities with neither.',
      },
    });
}

/** The stored voice for a preset id: null for the default voice; undefined when unknown. */
export function presetVoice(id: string): IdentityVoice | null | undefined {
  const preset = findPreset(id);
  if (!preset) return undefined;
  if (preset.id === DEFAULT_VOICE.id) return null;
  return { presetId: preset.id, multilingual: preset.multilingual, elevenlabsVoiceId: preset.elevenlabsVoiceId, profile: { ...preset.profile } };
}

/** The identity response's `voice_id`: the preset's id, `default`, or null for a voice cloned from its audio. */
export function voiceIdOf(voice: IdentityVoice | null | undefined): string | null {
  if (!voice) return DEFAULT_VOICE.id;
  return voice.presetId;
}

/** The 422 for a `voice_id` the catalogue does not know, or sent together with `audio`. */
export function voiceChoiceProblems(fields: { voice_id?: string; audio?: unknown }): FieldProblem[] {
  if (fields.voice_id === undefined) return [];
  if (fields.audio !== undefined) {
    return [{ loc: ['body', 'voice_id'], msg: 'Send either audio (to clone a voice) or voice_id (a preset voice), not both', type: 'voice_conflict' }];
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
    throw new MediaError(422, 'audio', `${error.message}; upload a recording of the voice speaking.`, 'audio.no_speech');
  }
}

/**
 * Cloning and releasing identity voices at the configured provider. Without ElevenLabs a
 * clone is its offline profile alone; it is still multilingual because espeak-ng speaks
 * every language mode.
 */
export class Voices {
  readonly elevenlabs: ElevenLabsVoices | undefined;

  constructor(
    settings: CloudProvider | undefined,
    /** Where running sessions are found; without it a release deletes at once (tools, tests). */
    private readonly db?: Database,
  ) {
    this.elevenlabs = settings && new ElevenLabsVoices(settings);
  }

  /** A voice cloned from an identity's sample. Provider failures answer 502. */
  async clone(identity: { id: string; name: string }, sample: { bytes: Uint8Array; kind: AudioKind }, profile: VoiceProfile): Promise<IdentityVoice> {
    let elevenlabsVoiceId: string | null = null;
    if (this.elevenlabs) {
      try {
        // The id in the name lets an operator match voices in the ElevenLabs account to identities.
        elevenlabsVoiceId = await this.elevenlabs.clone(
          `${identity.name.slice(0, 60)} (${identity.id})`,
          { bytes: sample.bytes, contentType: sample.kind, fileName: `voice.${FILE_EXTENSIONS[sample.kind]}` },
          `Likeness identity ${identity.id}`,
        );
      } catch (error) {
        if (error instanceof VoiceProviderError) throw new ApiError(502, error.message);
        throw error;
      }
    }
    return { presetId: null, multilingual: true, elevenlabsVoiceId, profile };
  }

  /**
   * Delete a cloned voice at the provider, best effort: a failure is logged, never raised, so
   * deleting an identity or replacing its voice does not depend on ElevenLabs being up.
   * Presets are shared premade voices and are never deleted.
   */
  async release(voice: IdentityVoice | null | undefined): Promise<void> {
    if (!voice || voice.presetId !== null || !voice.elevenlabsVoiceId || !this.elevenlabs) return;
    const voiceId = voice.elevenlabsVoiceId;
    if (this.db) {
      // A running session still speaks with it: deleted once the last such session ends.
      const [speaking] = await this.db
        .select({ id: sessions.id })
        .from(sessions)
        .where(and(eq(sessions.elevenlabsVoiceId, voiceId), eq(sessions.status, 'running')))
        .limit(1);
      if (speaking) {
        await this.db.insert(voiceReleases).values({ elevenlabsVoiceId: voiceId }).onConflictDoNothing();
        return;
      }
    }
    await this.#remove(voiceId);
  }

  /** Deletes the voices waiting for their sessions to end, once none runs. Called after sessions end. */
  async releaseUnused(): Promise<number> {
    if (!this.db || !this.elevenlabs) return 0;
    const idle = await this.db
      .select({ voiceId: voiceReleases.elevenlabsVoiceId })
      .from(voiceReleases)
      .where(
        notExists(
          this.db
            .select({ id: sessions.id })
            .from(sessions)
            .where(and(eq(sessions.elevenlabsVoiceId, voiceReleases.elevenlabsVoiceId), eq(sessions.status, 'running'))),
        ),
      );
    for (const { voiceId } of idle) {
      // The row goes first: two control planes sweeping at once delete at the provider once.
      const [claimed] = await this.db.delete(voiceReleases).where(eq(voiceReleases.elevenlabsVoiceId, voiceId)).returning();
      if (claimed) await this.#remove(voiceId);
    }
    return idle.length;
  }

  async #remove(voiceId: string): Promise<void> {
    await this.elevenlabs?.remove(voiceId).catch((error) => {
      console.error(`deleting ElevenLabs voice ${voiceId} failed:`, error instanceof Error ? error.message : error);
    });
  }
}
