// How the evaluation scores one turn: what the recogniser heard against what was said (word
// error rate), whether the reply holds an expected word, and which language it is in.
import { eld } from 'eld/medium';
import type { SpokenLanguage } from '../../../src/contract/index.ts';

/** Lower case, no accents or punctuation: "¿Cuál es…?" and "cual es" are the same words. */
export function normalise(text: string): string {
  return (
    text
      .normalize('NFD')
      // Combining marks, except the Cyrillic breve and diaeresis that make й and ї letters of their own.
      .replace(/(?<![иі])[\u0300-\u036f]/gu, '')
      .normalize('NFC')
      .toLowerCase()
      .replace(/ł/g, 'l')
      .replace(/[^\p{L}\p{N}\s]/gu, ' ')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

/** Word error rate: word-level edit distance over the reference's length. */
export function wordErrorRate(reference: string, heard: string): number {
  const ref = normalise(reference).split(' ').filter(Boolean);
  const hyp = normalise(heard).split(' ').filter(Boolean);
  let previous = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const row = [i];
    for (let j = 1; j <= hyp.length; j++)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    previous = row;
  }
  return ref.length === 0 ? 0 : previous[hyp.length]! / ref.length;
}

export function isRightAnswer(reply: string, expected: string[]): boolean {
  const words = ` ${normalise(reply)} `;
  return expected.some(
    (word) => words.includes(` ${normalise(word)} `) || (word.includes(' ') && words.includes(normalise(word))),
  );
}

// eld (an n-gram detector) tells even three-word replies apart; franc's trigrams did not.

/** The reply's language, ours or another ('other'); null when too short to tell. */
export function replyLanguage(reply: string): SpokenLanguage | 'other' | null {
  if (normalise(reply).split(' ').length < 3) return null;
  const detected = eld.detect(reply);
  if (!detected.isReliable()) return null;
  return (['en', 'es', 'pl', 'uk'] as const).find((code) => code === detected.language) ?? 'other';
}
