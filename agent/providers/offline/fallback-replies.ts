// What the offline model's reply becomes when the model gives none (issue 45 point 6): a
// generation that yields no words is tried once more with other sampling, then replaced by a
// short request to repeat, so a visitor's turn never meets silence. A refusal is told here too
// (the replies to tools' results: result-replies.ts).
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

/** How a refusal opens, in the languages the model answers in (checked on the reply's first sentence). */
const REFUSAL =
  /^(?:i'?m sorry,? but )?i (?:can(?:no|')t|am (?:not able|unable) to) (?:assist|help)|^i'?m sorry,? but i can(?:no|')t\b|^lo siento,? (?:pero )?no puedo (?:ayudar|asistir)|^no puedo (?:ayudar|asistir)/i;

export function isRefusal(sentence: string): boolean {
  return REFUSAL.test(sentence.trim().replace(/[’]/g, "'"));
}
