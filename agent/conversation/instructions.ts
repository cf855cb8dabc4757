// What the language model is told: the identity's prompt, the session's context (the start's
// `context` and the backend's context orders, docs/api.md#sessions-context), how to talk in a
// live voice call, the session's language rule (docs/api.md#languages), and how to read quoted
// data (quoted-data.ts). The offline model reads the same text as its system message
// (agent/providers/offline/llm.ts), so both know the context from the first reply. Only the
// backend's words go here: documents' passages and the visitor's app's notes are quoted data.
import { LANGUAGE_NAMES, type Language, SPOKEN_LANGUAGES, type SpokenLanguage } from '../../src/contract/index.ts';
import { standingKnowledgeRule } from './knowledge.ts';
import { QUOTED_DATA_RULE } from './quoted-data.ts';

const DEFAULT_PROMPT = 'You are a friendly, helpful assistant.';
/** Introduces the session's context: facts from the customer's backend, never a visitor's or a document's words. */
export const CONTEXT_HEADING = 'What you know about this conversation:';

/** For a returning visitor: what is remembered is theirs to hear, and not to be recited unasked. */
export const REMEMBERED_RULE =
  'You have spoken with this visitor before: the lines that start with "Remembered about the visitor" are what they told you then. Use them to recognise and help them, and tell them what you remember when they ask; do not recite them unprompted.';

export function isSpokenLanguage(code: string | null | undefined): code is SpokenLanguage {
  return (SPOKEN_LANGUAGES as readonly (string | null | undefined)[]).includes(code);
}

export interface InstructionsInput {
  prompt: string | null;
  /** The start's context for this session only; null or blank: none. */
  context?: string | null;
  language: Language;
  visualAwareness: boolean;
  /** The session may quote data to the model (it has documents or client_control): say how to read it. */
  quotedData?: boolean;
  /** Something is remembered of the visitor from earlier conversations (memory.ts): say how to use it. */
  remembers?: boolean;
  /** The rule for documents' passages goes here, not in each turn (knowledge.ts standingKnowledgeRule). */
  standingKnowledgeRule?: boolean;
}

export function agentInstructions({
  prompt,
  context,
  language,
  visualAwareness,
  quotedData,
  remembers,
  standingKnowledgeRule: knowledgeRule,
}: InstructionsInput): string {
  const parts = [(prompt ?? '').trim() || DEFAULT_PROMPT];
  // Right after the persona, before the rules: the small offline model used it there (Zofia, test/conversation).
  if (context?.trim()) parts.push(`${CONTEXT_HEADING}\n${context.trim()}`);
  parts.push(
    'You are talking with a visitor in a live voice conversation. Your words are spoken aloud: answer in one to three short sentences, without lists, markdown, emoji or stage directions.',
  );
  if (language === 'auto') {
    parts.push('Greet the visitor in English. After that, always answer in the language the visitor speaks.');
  } else {
    const name = LANGUAGE_NAMES[language];
    // A pinned language is a hard constraint (docs/api.md#languages).
    parts.push(`Always answer only in ${name}, even if the visitor speaks another language or asks you to switch.`);
  }
  if (quotedData || remembers) parts.push(QUOTED_DATA_RULE);
  if (remembers) parts.push(REMEMBERED_RULE);
  if (knowledgeRule) parts.push(standingKnowledgeRule());
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
