// Visemes: what the mouth does for a sound. A TTS that knows when it says each phoneme
// (Piper's alignments) hangs cues on the audio frames it yields (`VISEME_CUES` in the
// frame's userdata, times relative to that frame), the avatar's speech queue keeps them with
// the audio (an interruption drops both), and the renderer shapes the lips by them, loudness
// sizing the opening. Voices that time words only (ElevenLabs) get cues from spelling
// (letters.ts); speech with neither (OpenAI's voice) is drawn from loudness alone.

import type { Viseme, VisemeCue } from './types.ts';

export type { Viseme, VisemeCue } from './types.ts';

/** The key in an AudioFrame's userdata under which its cues travel. */
export const VISEME_CUES = 'likeness.viseme_cues';

/**
 * The mouth each viseme makes: opening (share of the widest), rounding (positive: pushed
 * forward, negative: spread), and press (how far lips parted in the photo come together:
 * 1 pressed shut, as for m/b/p; the lower lip to the upper teeth for f/v).
 */
export const VISEME_SHAPES: Readonly<Record<Viseme, { open: number; round: number; press: number }>> = {
  rest: { open: 0, round: 0, press: 0 },
  closed: { open: 0, round: 0, press: 1 },
  'lip-teeth': { open: 0, round: -0.04, press: 0.45 },
  teeth: { open: 0.16, round: -0.06, press: 0 },
  hush: { open: 0.2, round: 0.12, press: 0 },
  spread: { open: 0.45, round: -0.16, press: 0 },
  mid: { open: 0.55, round: 0, press: 0 },
  open: { open: 0.9, round: 0, press: 0 },
  round: { open: 0.5, round: 0.2, press: 0 },
};

// IPA symbols (espeak-ng's, as Piper phonemises) by the shape they make. Stress marks come
// before their vowel and join it; length and other marks join the sound before them.
const BY_SYMBOL: Record<string, Viseme> = {};
const GROUPS: Array<[Viseme, string]> = [
  ['closed', 'mbpɱβɸ'],
  ['lip-teeth', 'fvʋ'],
  ['teeth', 'stdnzθðɾɬʦʣ'],
  ['hush', 'ʃʒʧʤɕʑʂʐʨʥ'],
  ['spread', 'iɪeɛjyʏɨ'],
  ['mid', 'əɚɜʌlɫɹrɻkgɡŋxɣhɦʔçɲʎ'],
  ['open', 'aɑæɐɒ'],
  ['round', 'ouʊɔwøœɵʉʍ'],
];
for (const [viseme, symbols] of GROUPS) for (const symbol of symbols) BY_SYMBOL[symbol] = viseme;
const STRESS = new Set(['ˈ', 'ˌ']);
/**
 * Marks that lengthen or colour the sound before them rather than being one; and the gap
 * between words, which in running speech is no pause (the lips do not close between words).
 */
const MODIFIERS = new Set(['ː', 'ˑ', '̃', '͡', '̩', '̯', 'ʲ', 'ʰ', 'ʷ', ' ']);

/**
 * The viseme of one phoneme: a symbol (Piper) or a few (espeak-ng's events: "tʃ", "aɪ", "ˈa");
 * `undefined` for a lone stress or length mark (it belongs to a neighbour).
 */
export function visemeOf(phoneme: string): Viseme | undefined {
  if (MODIFIERS.has(phoneme) || STRESS.has(phoneme)) return undefined;
  let first: Viseme | undefined;
  for (const symbol of phoneme.normalize('NFD')) {
    const known = BY_SYMBOL[symbol];
    // An affricate shows its second half: "tʃ" pushes the lips forward.
    if (known === 'hush') return known;
    first ??= known;
  }
  // Punctuation (a pause) and Piper's sentence marks (^ $): the mouth rests.
  return first ?? 'rest';
}

/**
 * Phonemes with their lengths in samples (Piper's alignments) as cues in seconds from the
 * first sample. Neighbours of the same shape merge.
 */
export function cuesFromPhonemes(phonemes: Array<[string, number]>, sampleRate: number): VisemeCue[] {
  const cues: VisemeCue[] = [];
  let at = 0;
  /** A stress mark's time, waiting for its vowel; whether it was a primary stress. */
  let stress = 0;
  let primary = false;
  for (const [symbol, samples] of phonemes) {
    const duration = Math.max(0, samples) / sampleRate;
    if (STRESS.has(symbol)) {
      stress += duration;
      primary ||= symbol === 'ˈ';
      continue;
    }
    const viseme = visemeOf(symbol);
    const last = cues.at(-1);
    if (last && (viseme === undefined || (viseme === last.viseme && stress === 0))) {
      last.duration += stress + duration;
    } else {
      cues.push({
        viseme: viseme ?? 'rest',
        start: at,
        duration: stress + duration,
        ...(primary ? { stress: true } : {}),
      });
    }
    at += stress + duration;
    stress = 0;
    primary = false;
  }
  if (stress > 0) cues.push({ viseme: 'rest', start: at, duration: stress });
  return cues;
}

/** The cues that start within [from, from + length) seconds, re-timed relative to `from`. */
export function cuesWithin(cues: VisemeCue[], from: number, length: number): VisemeCue[] {
  const out: VisemeCue[] = [];
  for (const cue of cues) {
    if (cue.start >= from && cue.start < from + length) out.push({ ...cue, start: cue.start - from });
  }
  return out;
}

/** How much of [from, to) seconds each viseme covers, on a timeline of cues. */
export function visemeShares(cues: readonly VisemeCue[], from: number, to: number): Partial<Record<Viseme, number>> {
  const shares: Partial<Record<Viseme, number>> = {};
  const span = to - from;
  if (!(span > 0)) return shares;
  for (const cue of cues) {
    const overlap = Math.min(to, cue.start + cue.duration) - Math.max(from, cue.start);
    if (overlap > 0) shares[cue.viseme] = (shares[cue.viseme] ?? 0) + overlap / span;
  }
  return shares;
}

/** Whether a stressed syllable starts within [from, to) seconds, on a timeline of cues. */
export function stressWithin(cues: readonly VisemeCue[], from: number, to: number): boolean {
  return cues.some((cue) => cue.stress === true && cue.start >= from && cue.start < to);
}

export { cuesFromWords, type TimedWord, visemesOfWord } from './letters.ts';
