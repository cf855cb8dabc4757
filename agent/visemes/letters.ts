// Visemes from spelling, for voices that time words but give no phonemes: ElevenLabs aligns
// its audio to characters, which agents' ElevenLabs plugin hands on as timed words
// (`USERDATA_TIMED_TRANSCRIPT` on the frames). Each word's letters (digraphs as one sound)
// share its time, vowels twice as long as consonants. Spelling is not pronunciation ("knight", a silent e), but the lips
// are mostly in the letters: m/b/p close them, o/u round them, a opens them, in the four
// languages we speak (Latin and Cyrillic letters).
import type { Viseme, VisemeCue } from './types.ts';

/** Two letters that make one sound, and its shape. */
const DIGRAPHS: Record<string, Viseme> = {
  sh: 'hush',
  ch: 'hush',
  zh: 'hush',
  sz: 'hush',
  cz: 'hush',
  rz: 'hush',
  dż: 'hush',
  dź: 'hush',
  th: 'teeth',
  ph: 'lip-teeth',
  oo: 'round',
  ou: 'round',
  qu: 'round',
  ee: 'spread',
};
const LETTERS: Record<string, Viseme> = {};
const GROUPS: Array<[Viseme, string]> = [
  ['closed', 'mbpмбп'],
  ['lip-teeth', 'fvфв'],
  ['teeth', 'stdnzcxśźńсзтдцн'],
  ['hush', 'jżшжчщ'],
  ['spread', 'ieyéíęеєиіїэ'],
  ['mid', 'lrkghqлркгґхй'],
  ['open', 'aáąаяä'],
  ['round', 'ouwóúłоуюёöü'],
];
for (const [viseme, letters] of GROUPS) for (const letter of letters) LETTERS[letter] = viseme;

/** The sounds a word is spelled with, in order: letters without a shape (digits, marks) are skipped. */
export function visemesOfWord(word: string): Viseme[] {
  const letters = [...word.toLowerCase()];
  const out: Viseme[] = [];
  for (let i = 0; i < letters.length; i++) {
    const pair = DIGRAPHS[letters[i]! + (letters[i + 1] ?? '')];
    if (pair) {
      out.push(pair);
      i++;
      continue;
    }
    const single = LETTERS[letters[i]!];
    if (single) out.push(single);
  }
  return out;
}

/** Vowels last about twice as long as consonants in running speech: a word's time is shared so. */
const VOWELS = new Set<Viseme>(['open', 'round', 'spread']);
const VOWEL_WEIGHT = 2;

/** A word with its time in the speech, seconds from the reply's first sample (agents' TimedString). */
export interface TimedWord {
  text: string;
  startTime?: number;
  endTime?: number;
}

/** Cues for timed words: each word's sounds share its span (vowels twice as long); neighbours of the same shape merge. Untimed words are skipped. */
export function cuesFromWords(words: readonly TimedWord[]): VisemeCue[] {
  const cues: VisemeCue[] = [];
  for (const word of words) {
    const { startTime: start, endTime: end } = word;
    if (start === undefined || end === undefined || !(end > start)) continue;
    const sounds = visemesOfWord(word.text);
    const weights = sounds.map((viseme) => (VOWELS.has(viseme) ? VOWEL_WEIGHT : 1));
    const unit = (end - start) / weights.reduce((a, b) => a + b, 0);
    let at = start;
    sounds.forEach((viseme, i) => {
      const duration = weights[i]! * unit;
      const last = cues.at(-1);
      if (last && last.viseme === viseme && Math.abs(last.start + last.duration - at) < 1e-6) last.duration += duration;
      else cues.push({ viseme, start: at, duration });
      at += duration;
    });
  }
  return cues;
}
