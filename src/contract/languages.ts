// The language modes of identities and sessions (docs/api.md#languages): `auto` greets in
// English and follows the visitor; the others are pinned. The agent speaks the spoken ones.

export const LANGUAGES = ['auto', 'en', 'es', 'pl', 'uk'] as const;
export type Language = (typeof LANGUAGES)[number];

/** The languages the agent listens and speaks in: every mode but `auto`. */
export const SPOKEN_LANGUAGES = ['en', 'es', 'pl', 'uk'] as const satisfies readonly Exclude<Language, 'auto'>[];
export type SpokenLanguage = (typeof SPOKEN_LANGUAGES)[number];

/** Each spoken language's English name: the agent's instructions and the console's labels say it. */
export const LANGUAGE_NAMES: Readonly<Record<SpokenLanguage, string>> = {
  en: 'English',
  es: 'Spanish',
  pl: 'Polish',
  uk: 'Ukrainian',
};
