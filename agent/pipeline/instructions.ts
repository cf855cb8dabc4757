// What the language model is told: the identity's prompt, how to talk in a live voice
// call, and the session's language rule (spec §4.2, §4.6 rules 1–3).
import type { LanguageMode, SpokenLanguage } from '../providers/index.ts';

export const LANGUAGE_NAMES: Record<SpokenLanguage, string> = { en: 'English', es: 'Spanish', pl: 'Polish', uk: 'Ukrainian' };

const DEFAULT_PROMPT = 'You are a friendly, helpful assistant.';

export function isSpokenLanguage(code: string | null | undefined): code is SpokenLanguage {
  return code === 'en' || code === 'es' || code === 'pl' || code === 'uk';
}

export interface InstructionsInput {
  prompt: string | null;
  language: LanguageMode;
  visualAwareness: boolean;
}

export function agentInstructions({ prompt, language, visualAwareness }: InstructionsInput): string {
  const parts = [
    (prompt ?? '').trim() || DEFAULT_PROMPT,
    'You are talking with a visitor in a live voice conversation. Your words are spoken aloud: answer in one to three short sentences, without lists, markdown, emoji or stage directions.',
  ];
  if (language === 'auto') {
    parts.push('Greet the visitor in English. After that, always answer in the language the visitor speaks.');
  } else {
    const name = LANGUAGE_NAMES[language];
    // A pinned language is a hard constraint (spec §4.6 rule 3).
    parts.push(`Always answer only in ${name}, even if the visitor speaks another language or asks you to switch.`);
  }
  if (visualAwareness) {
    parts.push(
      "When the visitor's camera is on, images from it taken while they spoke are attached to their message: use them when they help, and do not describe them unprompted.",
    );
  }
  return parts.join('\n\n');
}

/** Added to a turn in auto mode once the visitor's language is known. */
export function followLanguageInstruction(language: SpokenLanguage): string {
  return `The visitor is speaking ${LANGUAGE_NAMES[language]}: answer in ${LANGUAGE_NAMES[language]}.`;
}

/** The greeting request: the first words of the session. */
export function greetingInstruction(language: LanguageMode): string {
  const name = LANGUAGE_NAMES[language === 'auto' ? 'en' : language];
  return `Greet the visitor warmly in ${name} in one short sentence and offer your help.`;
}
