// What an identity's voice is, as stored on the identity and read by sessions.

/** How the offline text-to-speech imitates a voice: measured from a sample, or a preset's. */
export interface VoiceProfile {
  /** Median fundamental frequency of the speech. */
  pitchHz: number;
  /** Speaking rate. */
  wordsPerMinute: number;
}

/**
 * The identity's voice. Null on the row means the default English-only voice.
 * Cloned from the uploaded audio (`presetId` null) or a preset from GET /v1/voices.
 */
export interface IdentityVoice {
  presetId: string | null;
  /** Whether it may speak every language mode (docs/api.md#languages: all but `en` need it). */
  multilingual: boolean;
  /** The voice at ElevenLabs, when it was cloned there or the preset maps to one. */
  elevenlabsVoiceId: string | null;
  /** What the offline TTS uses. */
  profile: VoiceProfile;
}
