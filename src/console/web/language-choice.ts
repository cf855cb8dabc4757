// Language choices that can talk (docs/api.md#languages): every mode but English needs a
// multilingual voice, a rule the API checks only when a session starts. The identity forms
// flag a language the chosen voice cannot speak and hold their submit, before anything is
// charged; the create form's language follows the voice until the person picks one.
import { h } from './dom.ts';
import { LANGUAGE_NAMES, type Language, type Voice } from './resources.ts';

/** Whether a preset voice speaks every language mode; unknown presets are taken as English only. */
export function presetIsMultilingual(voices: Voice[], voiceId: string): boolean {
  return voices.some((voice) => voice.voice_id === voiceId && voice.multilingual);
}

/** Why `language` cannot talk with an English-only voice, or null when it can. */
export function languageProblem(language: string, multilingual: boolean): string | null {
  if (language === 'en' || multilingual) return null;
  const what =
    language === 'auto' ? 'the visitor’s language (Auto)' : (LANGUAGE_NAMES[language as Language] ?? language);
  return `To talk in ${what}, the identity needs a multilingual voice: upload a voice sample or pick a multilingual preset voice, or choose English.`;
}

export interface LanguageGuard {
  /** Run after the voice changed (and after the form was reset). */
  update(): void;
  /** True while the chosen language cannot talk with the chosen voice. */
  blocked(): boolean;
}

/**
 * Keeps `language` to what the voice can speak: with `follow`, it defaults to Auto for a
 * multilingual voice and to English otherwise, until the person chooses a language; a choice
 * the voice cannot speak is explained under the menu and, given a `submit`, disables it.
 */
export function guardLanguage(options: {
  language: HTMLSelectElement;
  submit?: HTMLButtonElement;
  multilingual: () => boolean;
  follow: boolean;
}): LanguageGuard {
  const { language, submit, multilingual } = options;
  const note = h('p', { id: `${language.id}-problem`, class: 'field-problem', 'aria-live': 'polite', hidden: true });
  language.after(note);
  language.setAttribute(
    'aria-describedby',
    [language.getAttribute('aria-describedby'), note.id].filter(Boolean).join(' '),
  );
  let chosen = !options.follow;
  let problem: string | null = null;
  const update = () => {
    if (!chosen) language.value = multilingual() ? 'auto' : 'en';
    problem = languageProblem(language.value, multilingual());
    note.textContent = problem ?? '';
    note.hidden = !problem;
    if (problem) language.setAttribute('aria-invalid', 'true');
    else language.removeAttribute('aria-invalid');
    if (submit) submit.disabled = problem !== null;
  };
  language.addEventListener('change', () => {
    chosen = true;
    update();
  });
  // A reset form starts over: the default follows the voice again.
  language.form?.addEventListener('reset', () => {
    chosen = !options.follow;
    queueMicrotask(update);
  });
  update();
  return { update, blocked: () => submit !== undefined && problem !== null };
}
