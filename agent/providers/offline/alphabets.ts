// The characters SmolLM2 may write in a reply, per language: a GBNF grammar llama.cpp samples
// under. The 135M model knows little beyond English: asked in Ukrainian it answered in Russian
// ("Яа Ada, её. Обязательно.", 5 of the evaluation's 6 Ukrainian questions), and English
// sessions drifted into French or Italian before the prompt got its language example. A pinned
// language is a hard rule (docs/api.md#languages), so the reply's letters are held to the
// language's alphabet: Ukrainian without Latin letters or Russian's ы э ё ъ, Spanish and
// Polish with their own accented letters only, English plain ASCII. It cannot make the model
// know the language; it keeps it from speaking another script or another language's letters,
// at no measurable cost per token (llama.cpp checks the sampled token against the grammar).
import type { SpokenLanguage } from '../../../src/contract/index.ts';

/** Letters of each language, as GBNF character-class ranges. */
export const ALPHABETS: Readonly<Record<SpokenLanguage, string>> = {
  // Loanwords lose their accents ("cafe"): the voices read them the same.
  en: 'a-zA-Z',
  es: 'a-zA-ZáéíóúüñÁÉÍÓÚÜÑ',
  pl: 'a-zA-ZąćęłńóśźżĄĆĘŁŃÓŚŹŻ',
  // а-щ skips ъ ы (U+044A-B); ь ю я follow; э ё are outside the ranges.
  uk: 'а-щьюяієїґА-ЩЬЮЯІЄЇҐ',
};

/**
 * What any reply may hold besides letters: digits, spaces, punctuation, quotes, units. Read the
 * same by GBNF and by a JavaScript character class (\n, \[ and \] escaped, the hyphen last).
 */
const COMMON = '0-9 \\n!"#$%&\'()*+,./:;<=>?@\\[\\]_{}~¿¡«»„”“‘’—–…°€£-';

/** The grammar a reply in `language` is sampled under: any run of its letters and the common characters. */
export function replyGrammar(language: SpokenLanguage): string {
  return `root ::= [${ALPHABETS[language]}${COMMON}]*`;
}

/** Whether `text` uses only what replyGrammar(language) allows (the tests' check, one definition). */
export function withinAlphabet(text: string, language: SpokenLanguage): boolean {
  return new RegExp(`^[${ALPHABETS[language]}${COMMON}]*$`, 'u').test(text);
}
