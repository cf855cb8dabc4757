// Phonemes to mouth shapes: Piper's alignments (IPA symbols with their lengths in samples)
// become viseme cues; stress marks join the vowel after them, length marks and the gaps
// between words the sound before (the lips do not close between words), punctuation rests.
import { describe, expect, test } from 'bun:test';
import {
  cuesFromPhonemes,
  cuesFromWords,
  cuesWithin,
  stressWithin,
  visemeOf,
  visemeShares,
  visemesOfWord,
} from '../../agent/visemes/index.ts';

const RATE = 1000; // samples per second: lengths below read as milliseconds

describe('visemes', () => {
  test('each sound class has its shape', () => {
    expect(['m', 'b', 'p'].map(visemeOf)).toEqual(['closed', 'closed', 'closed']);
    expect(['f', 'v'].map(visemeOf)).toEqual(['lip-teeth', 'lip-teeth']);
    expect(['o', 'u', 'ʊ', 'w', 'ɔ'].map(visemeOf)).toEqual(['round', 'round', 'round', 'round', 'round']);
    expect(['i', 'ɪ', 'e', 'ɛ'].map(visemeOf)).toEqual(['spread', 'spread', 'spread', 'spread']);
    expect(['a', 'æ', 'ɑ', 'ɐ'].map(visemeOf)).toEqual(['open', 'open', 'open', 'open']);
    expect(['s', 't', 'ʃ'].map(visemeOf)).toEqual(['teeth', 'teeth', 'hush']);
    expect(['^', '$', '.', ','].map(visemeOf)).toEqual(['rest', 'rest', 'rest', 'rest']);
    expect(['ˈ', 'ː', ' '].map(visemeOf)).toEqual([undefined, undefined, undefined]);
    // espeak-ng's events carry several symbols: affricates, diphthongs, stressed vowels.
    expect(['tʃ', 'dʒ', 'aɪ', 'ˈo', 'β', 'ʂ'].map(visemeOf)).toEqual([
      'hush',
      'hush',
      'open',
      'round',
      'closed',
      'hush',
    ]);
  });

  test("Piper's alignment of “Bob, map” as cues", () => {
    const cues = cuesFromPhonemes(
      [
        ['^', 50],
        ['b', 40],
        ['ˈ', 30],
        ['ɑ', 100],
        ['b', 60],
        [',', 120],
        [' ', 30],
        ['m', 50],
        ['ˈ', 20],
        ['æ', 90],
        ['p', 40],
        ['$', 50],
      ],
      RATE,
    );
    expect(cues.map((c) => [c.viseme, Math.round(c.start * RATE), Math.round(c.duration * RATE)])).toEqual([
      ['rest', 0, 50],
      ['closed', 50, 40],
      ['open', 90, 130], // the stress mark's 30 ms joins its vowel
      ['closed', 220, 60],
      ['rest', 280, 150], // the comma's pause, and the word gap after it
      ['closed', 430, 50],
      ['open', 480, 110],
      ['closed', 590, 40],
      ['rest', 630, 50],
    ]);
    // The vowels after a primary stress mark are marked: the head and brows accent them.
    expect(cues.flatMap((c, i) => (c.stress ? [i] : []))).toEqual([2, 6]);
    expect(stressWithin(cues, 0.08, 0.1)).toBe(true);
    expect(stressWithin(cues, 0.1, 0.47)).toBe(false);
  });

  test('a word gap in running speech does not close the lips', () => {
    const cues = cuesFromPhonemes(
      [
        ['ɑ', 100],
        [' ', 40],
        ['ɑ', 100],
      ],
      RATE,
    );
    expect(cues).toHaveLength(1);
    expect(cues[0]!.viseme).toBe('open');
    expect(cues[0]!.duration).toBeCloseTo(0.24, 9);
  });

  test('cues are cut to a frame and measured over a slice', () => {
    const cues = cuesFromPhonemes(
      [
        ['m', 100],
        ['a', 100],
        ['u', 100],
      ],
      RATE,
    );
    expect(cuesWithin(cues, 0.1, 0.1)).toEqual([{ viseme: 'open', start: 0, duration: 0.1 }]);
    const later = cuesWithin(cues, 0.15, 0.1);
    expect(later.map((c) => c.viseme)).toEqual(['round']);
    expect(later[0]!.start).toBeCloseTo(0.05, 9);
    const shares = visemeShares(cues, 0.05, 0.15);
    expect(shares.closed).toBeCloseTo(0.5, 6);
    expect(shares.open).toBeCloseTo(0.5, 6);
    expect(visemeShares(cues, 0.4, 0.5)).toEqual({});
  });

  test('spelling gives the shapes of a word when a voice times words only (ElevenLabs)', () => {
    expect(visemesOfWord('Mama,')).toEqual(['closed', 'open', 'closed', 'open']);
    expect(visemesOfWord('shop')).toEqual(['hush', 'round', 'closed']);
    expect(visemesOfWord('five')).toEqual(['lip-teeth', 'spread', 'lip-teeth', 'spread']);
    expect(visemesOfWord('мама')).toEqual(['closed', 'open', 'closed', 'open']);
    expect(visemesOfWord('czółno')).toEqual(['hush', 'round', 'round', 'teeth', 'round']);
    expect(visemesOfWord('42!')).toEqual([]);
  });

  test('timed words become cues: the sounds share each word, vowels twice as long, and like neighbours merge', () => {
    const cues = cuesFromWords([
      { text: 'map ', startTime: 0, endTime: 0.3 },
      { text: 'pool', startTime: 0.3, endTime: 0.6 },
      { text: 'untimed' },
    ]);
    // Vowels count double: "map" is 75 + 150 + 75 ms; "pool" ("oo" one sound) 75 + 150 + 75.
    expect(cues.map((c) => [c.viseme, Math.round(c.start * RATE), Math.round(c.duration * RATE)])).toEqual([
      ['closed', 0, 75],
      ['open', 75, 150],
      // "p" ends "map" and starts "pool": one closure across the word boundary.
      ['closed', 225, 150],
      ['round', 375, 150],
      ['mid', 525, 75],
    ]);
  });
});
