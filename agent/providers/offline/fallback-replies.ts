// What the offline model's reply becomes when the model fails it (issue 45 points 5 and 6): a
// generation that yields no words is tried once more with other sampling, then replaced by a
// short request to repeat, so a visitor's turn never meets silence; and a reply to a tool's
// successful result that refuses ("I'm sorry, but I can't assist with that.", seen after an
// order lookup that found the order) or says nothing is replaced by a sentence built from the
// result itself, which cannot misstate it.
import type { SpokenLanguage } from '../../../src/contract/index.ts';

/** Sampling for the second try of an empty reply: the first one's seed and temperature gave nothing. */
export const RETRY_SAMPLING = { temperature: 0.7, seedOffset: 1 } as const;

/** Said when two generations gave no words. */
export const REPEAT_PLEASE: Record<SpokenLanguage, string> = {
  en: 'Sorry, could you say that again?',
  es: 'Perdona, ¿puedes repetirlo?',
  pl: 'Przepraszam, czy możesz powtórzyć?',
  uk: 'Вибачте, чи можете повторити?',
};

const FOUND: Record<SpokenLanguage, string> = {
  en: 'Here is what I found:',
  es: 'Esto es lo que encontré:',
  pl: 'Oto co znalazłem:',
  uk: 'Ось що я знайшов:',
};

const FOUND_NOTHING: Record<SpokenLanguage, string> = {
  en: 'I found nothing.',
  es: 'No encontré nada.',
  pl: 'Nic nie znalazłem.',
  uk: 'Я нічого не знайшов.',
};

/** How a refusal opens, in the languages the model answers in (checked on the reply's first sentence). */
const REFUSAL =
  /^(?:i'?m sorry,? but )?i (?:can(?:no|')t|am (?:not able|unable) to) (?:assist|help)|^i'?m sorry,? but i can(?:no|')t\b|^lo siento,? (?:pero )?no puedo (?:ayudar|asistir)|^no puedo (?:ayudar|asistir)/i;

export function isRefusal(sentence: string): boolean {
  return REFUSAL.test(sentence.trim().replace(/[’]/g, "'"));
}

/** At most this much of a result is read out (a long one is cut at a word). */
const MAX_RESULT_CHARS = 240;

/**
 * A result as words: a JSON object's fields as "status: shipped yesterday; eta: Friday", a
 * list's items joined, a string as itself; cut at a word past MAX_RESULT_CHARS.
 */
export function resultWords(result: string): string {
  let words: string;
  try {
    words = asWords(JSON.parse(result));
  } catch {
    words = result;
  }
  words = words.replace(/\s+/g, ' ').trim();
  if (words.length <= MAX_RESULT_CHARS) return words;
  const cut = words.slice(0, MAX_RESULT_CHARS);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), 1))}…`;
}

function asWords(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(asWords).filter(Boolean).join(', ');
  if (typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .map(([key, field]) => [key.replace(/[_-]+/g, ' '), asWords(field)] as const)
      .filter(([, field]) => field)
      .map(([key, field]) => `${key}: ${field}`)
      .join('; ');
  return String(value);
}

/** The sentence said in place of a refusal of (or silence about) successful results. */
export function resultSentence(results: readonly string[], language: SpokenLanguage): string {
  const words = results.map(resultWords).filter(Boolean).join('; ');
  if (!words) return FOUND_NOTHING[language];
  return `${FOUND[language]} ${words}${/[.!?…]$/.test(words) ? '' : '.'}`;
}
