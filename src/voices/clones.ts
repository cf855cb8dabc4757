// Voices cloned from identities' samples (docs/api.md#voices): made at ElevenLabs when it is
// configured (always also an offline profile), and deleted there once no identity has them
// and no running session speaks with them (the release sweep).
import { and, eq, notExists } from 'drizzle-orm';
import type { CloudProvider } from '../config.ts';
import type { Database } from '../db/index.ts';
import { ApiError } from '../http/errors.ts';
import { log } from '../logging/index.ts';
import type { AudioKind } from '../media/index.ts';
import { sessions } from '../sessions/schema.ts';
import { ElevenLabsVoices, VoiceProviderError } from './elevenlabs.ts';
import { voiceReleases } from './schema.ts';
import type { IdentityVoice, VoiceProfile } from './voice.ts';

const FILE_EXTENSIONS: Record<AudioKind, string> = { 'audio/wav': 'wav', 'audio/mpeg': 'mp3', 'audio/mp4': 'm4a' };

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
  async clone(
    identity: { id: string; name: string },
    sample: { bytes: Uint8Array; kind: AudioKind },
    profile: VoiceProfile,
  ): Promise<IdentityVoice> {
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
            .where(
              and(eq(sessions.elevenlabsVoiceId, voiceReleases.elevenlabsVoiceId), eq(sessions.status, 'running')),
            ),
        ),
      );
    for (const { voiceId } of idle) {
      // The row goes first: two control planes sweeping at once delete at the provider once.
      const [claimed] = await this.db
        .delete(voiceReleases)
        .where(eq(voiceReleases.elevenlabsVoiceId, voiceId))
        .returning();
      if (claimed) await this.#remove(voiceId);
    }
    return idle.length;
  }

  async #remove(voiceId: string): Promise<void> {
    await this.elevenlabs?.remove(voiceId).catch((error) => {
      log.warn({ err: error, voice_id: voiceId }, 'deleting an ElevenLabs voice failed');
    });
  }
}
