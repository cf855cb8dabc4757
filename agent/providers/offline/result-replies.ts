// What the offline agent says after its tools answered (issue 45 point 5). The 0.5B model said
// 10 of 40 results faithfully (bench/tools/results.ts): "Yes, my appointment is still on" for
// one cancelled by the clinic, "I'm sorry, but I can't assist with that" for an order it found.
// So its reply is checked before it is spoken: it must state every number of the results, most
// of their words, and their negation when they have one; otherwise the results are read out
// instead, which cannot misstate them. A call that failed is answered by a fixed sentence (the
// model guessed a result for half of them), and a call done with nothing to tell by another.
import type { SpokenLanguage } from '../../../src/contract/index.ts';
import { toolResultKind } from '../../conversation/tools.ts';
import { isRefusal } from './fallback-replies.ts';
import type { LlamaModelTurn } from './llama.ts';

/** What a result the model read is. */
export type ResultKind = ReturnType<typeof toolResultKind>;

export interface ReadResult {
  kind: ResultKind;
  text: string;
}

export const FOUND: Record<SpokenLanguage, string> = {
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
export const COULD_NOT: Record<SpokenLanguage, string> = {
  en: "Sorry, I couldn't check that right now. Please try again in a moment.",
  es: 'Lo siento, no he podido comprobarlo ahora mismo. Inténtalo de nuevo en un momento.',
  pl: 'Przepraszam, nie udało mi się tego teraz sprawdzić. Spróbuj ponownie za chwilę.',
  uk: 'Вибачте, зараз не вдалося це перевірити. Спробуйте ще раз за хвилину.',
};
const DONE: Record<SpokenLanguage, string> = {
  en: "Done, that's taken care of.",
  es: 'Hecho, ya está.',
  pl: 'Gotowe, załatwione.',
  uk: 'Готово, зроблено.',
};
export const TELL_ME_MORE: Record<SpokenLanguage, string> = {
  en: 'Could you tell me a little more, so I can check it?',
  es: '¿Me das un poco más de detalle para poder comprobarlo?',
  pl: 'Czy możesz podać trochę więcej szczegółów, żebym mógł to sprawdzić?',
  uk: 'Чи можете розповісти трохи більше, щоб я міг це перевірити?',
};
const YES_NO: Record<SpokenLanguage, [string, string]> = {
  en: ['yes', 'no'],
  es: ['sí', 'no'],
  pl: ['tak', 'nie'],
  uk: ['так', 'ні'],
};

/** Lower case, accents off, one kind of apostrophe: how replies and results are compared. */
const fold = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFD')
    .replace(/(\p{Script=Latin})\p{M}+/gu, '$1')
    .normalize('NFC')
    .replace(/[’`]/g, "'");

/** Whole words only: `\b` knows no Cyrillic. */
const wholeWords = (alternatives: string) =>
  new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives})(?![\\p{L}\\p{N}])`, 'u');
const NEGATION = wholeWords(
  "no|not|none|never|nothing|\\p{L}+n't|cancel\\p{L}*|unknown|false|unavailable|ningun\\p{L}*|nada|nunca|desconocid\\p{L}*|agotad\\p{L}*|nie|brak|ні|не|немає",
);
const DONE_CUE = wholeWords(
  "done|sent|ready|booked|taken care|on its way|will (?:receive|get)|i(?:'ve| have) \\p{L}+ed|enviad\\p{L}*|envie|hecho|listo|reservad\\p{L}*|gotowe|wysłan\\p{L}*|готово|надіслан\\p{L}*",
);
/** Words too common to say whether a fact was stated. */
const COMMON = new Set(
  'this that with from have your their there what when where which about since then than into onto para pero como esta este esto desde hasta sobre todo cual cuando donde'.split(
    ' ',
  ),
);

/** A result's values: a JSON document's leaves, or the text itself. */
function valuesOf(text: string): unknown[] {
  try {
    const parsed: unknown = JSON.parse(text);
    const leaves: unknown[] = [];
    const walk = (value: unknown) => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === 'object') Object.values(value).forEach(walk);
      else if (value !== null && value !== undefined) leaves.push(value);
    };
    walk(parsed);
    return leaves;
  } catch {
    return [text];
  }
}

/** Numbers as said: leading zeros off each group ("09:00" → "9:00"). */
const numbersIn = (text: string) => (text.match(/\d+(?:[:.,]\d+)*/g) ?? []).map((n) => n.replace(/\b0+(\d)/g, '$1'));

/** Whether `reply` states the results: every number, most words, and their negation if they have one. */
export function statesResults(reply: string, results: readonly string[]): boolean {
  const said = fold(reply);
  const saidNumbers = new Set(numbersIn(said));
  const saidWords = said.match(/\p{L}{4,}/gu) ?? [];
  const values = results.flatMap(valuesOf);
  const words: string[] = [];
  let negated = false;
  for (const value of values) {
    if (value === false) negated = true;
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    const text = fold(String(value));
    if (!numbersIn(text).every((n) => saidNumbers.has(n))) return false;
    if (NEGATION.test(text)) negated = true;
    words.push(...(text.match(/\p{L}{4,}/gu) ?? []).filter((word) => !COMMON.has(word)));
  }
  if (negated && !NEGATION.test(said)) return false;
  // A word is said when a word of the reply shares its first five letters ("enviado"/"enviamos" do not).
  const stated = words.filter((word) => saidWords.some((w) => w.slice(0, 5) === word.slice(0, 5)));
  return stated.length * 2 >= words.length;
}

/** At most this much of a result is read out (a long one is cut at a word). */
const MAX_RESULT_CHARS = 240;

/**
 * A result as words: a JSON object's fields as "status: shipped yesterday; eta: Friday", yes
 * and no for true and false, a list's items joined, a string as itself; cut at a word.
 */
export function resultWords(result: string, language: SpokenLanguage = 'en'): string {
  const asWords = (value: unknown): string => {
    if (value === null || value === undefined) return '';
    if (typeof value === 'boolean') return YES_NO[language][value ? 0 : 1];
    if (Array.isArray(value)) return value.map(asWords).filter(Boolean).join(', ');
    if (typeof value === 'object')
      return Object.entries(value as Record<string, unknown>)
        .map(([key, field]) => [key.replace(/[_-]+/g, ' '), asWords(field)] as const)
        .filter(([, field]) => field)
        .map(([key, field]) => `${key}: ${field}`)
        .join('; ');
    return String(value);
  };
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

/** The results read out. */
export function resultSentence(results: readonly string[], language: SpokenLanguage): string {
  const words = results
    .map((result) => resultWords(result, language))
    .filter(Boolean)
    .join('; ');
  if (!words) return FOUND_NOTHING[language];
  return `${FOUND[language]} ${words}${/[.!?…]$/.test(words) ? '' : '.'}`;
}

/** The results the model reads in a turn of calls, each with what it says of its call. */
export function resultsOf(turn: LlamaModelTurn): ReadResult[] {
  return turn.response.flatMap((part) => {
    if (typeof part === 'string') return [];
    const text = String(part.result ?? '');
    return [{ kind: toolResultKind(text), text }];
  });
}

/** Whether the reply after `results` is made by the model at all (a failed call's is not). */
export function fixedReplyTo(results: readonly ReadResult[], language: SpokenLanguage): string | null {
  return results.some((result) => result.kind === 'failed') ? COULD_NOT[language] : null;
}

/** What is said after `results`: the model's `reply` when it is faithful to them, or one built from them. */
export function replyToResults(reply: string, results: readonly ReadResult[], language: SpokenLanguage): string {
  const said = reply.trim();
  const usable = said !== '' && !isRefusal(said);
  const fixed = fixedReplyTo(results, language);
  if (fixed) return fixed;
  // Arguments the tool refused: the model asks the visitor what is missing.
  if (results.some((result) => result.kind === 'not_called')) return usable ? said : TELL_ME_MORE[language];
  const told = results.filter((result) => result.kind === 'ok').map((result) => result.text);
  if (told.length === 0)
    return usable && DONE_CUE.test(fold(said)) && !NEGATION.test(fold(said)) ? said : DONE[language];
  return usable && statesResults(said, told) ? said : resultSentence(told, language);
}
