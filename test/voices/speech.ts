// Spoken samples for the voice tests: real speech from espeak-ng (`apt-get install espeak-ng`).
import { espeakWav as espeakWavOf } from '../support/fakes/speech.ts';

export const SAMPLE_TEXT =
  'Hello, my name is Ada. I help visitors find their way around the museum, and I love to talk about old maps, ' +
  'ships and the people who sailed them across the ocean.';

/** A WAV of `text` as espeak-ng speaks it; `pitch` is espeak's 0–99 scale, `wordsPerMinute` its -s. */
export function espeakWav(text: string, { pitch = 50, wordsPerMinute = 160, voice = 'en' } = {}): Promise<Uint8Array> {
  return espeakWavOf(text, { pitch, wordsPerMinute, voice });
}
