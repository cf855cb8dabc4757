// The session's first words, from a template: the identity's name, its role when its prompt
// states one in the greeting's language, and an offer of help. Not generated: a small
// offline model greeted off-topic ("I'm glad to assist you with your project"), a cloud one
// costs a round trip before the visitor hears anything, and neither can be tested to say
// the right thing. Every language mode greets in its own language (`auto`: English).
import type { Language, ParsedDispatch, SpokenLanguage } from '../../src/contract/index.ts';
import { rememberedName } from './memory.ts';

interface GreetingWords {
  hello: string;
  /** With nobody to introduce. */
  helloAlone: string;
  /** "I'm Ada", "I'm a tour guide", "I'm Ada, a tour guide" (whichever parts there are). */
  introduce(name: string | null, role: string | null): string;
  offer: string;
  /** To a returning visitor (one the service remembers: agent/conversation/memory.ts), by name when it is remembered. */
  again(name: string | null): string;
  /** Where a prompt in this language states who the agent is: the `role` group. */
  rolePattern: RegExp;
}

const NAME = String.raw`\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*)?`;
/** A role runs to the first clause break: "You are a geography teacher who answers…" → "a geography teacher". */
const roleUntil = (joiners: string) => String.raw`[^.,;:!?\n()]{2,60}?(?=\s+(?:${joiners})\s|\s*[.,;:!?\n(]|$)`;

const WORDS: Record<SpokenLanguage, GreetingWords> = {
  en: {
    hello: 'Hi',
    helloAlone: 'Hello!',
    introduce: (name, role) => `I'm ${[name, role].filter(Boolean).join(', ')}`,
    offer: 'How can I help you today?',
    again: (name) => (name ? `Good to see you again, ${name}!` : 'Good to see you again!'),
    rolePattern: new RegExp(
      String.raw`^\s*(?:[Yy]ou are|[Yy]ou're)\s+(?:${NAME},\s+)?(?<role>(?:a|an)\s${roleUntil('who|that|which|and|with|here')})`,
      'u',
    ),
  },
  es: {
    hello: 'Hola',
    helloAlone: '¡Hola!',
    introduce: (name, role) => `soy ${[name, role].filter(Boolean).join(', ')}`,
    offer: '¿En qué puedo ayudarte?',
    again: (name) => (name ? `¡Qué gusto verte de nuevo, ${name}!` : '¡Qué gusto verte de nuevo!'),
    rolePattern: new RegExp(
      String.raw`^\s*(?:[Ee]res|[Tt]ú eres)\s+(?:${NAME},\s+)?(?<role>(?:un|una)\s${roleUntil('que|quien|y|con|aquí')})`,
      'u',
    ),
  },
  pl: {
    hello: 'Dzień dobry',
    helloAlone: 'Dzień dobry!',
    // The role comes in the instrumental ("Jesteś przewodnikiem…"), right only straight after
    // "jestem": with a name it would have to be the nominative, so the name alone is said.
    introduce: (name, role) => `jestem ${name ?? role}`,
    offer: 'W czym mogę pomóc?',
    again: (name) => (name ? `Miło znów Cię widzieć, ${name}!` : 'Miło znów Cię widzieć!'),
    rolePattern: new RegExp(
      String.raw`^\s*[Jj]esteś\s+(?:${NAME},\s+)?(?<role>${roleUntil('który|która|które|i|oraz|z')})`,
      'u',
    ),
  },
  uk: {
    hello: 'Вітаю',
    helloAlone: 'Вітаю!',
    introduce: (name, role) => `я ${[name, role].filter(Boolean).join(', ')}`,
    offer: 'Чим можу допомогти?',
    again: (name) => (name ? `Приємно знову вас бачити, ${name}!` : 'Приємно знову вас бачити!'),
    // Only with the dash ("Ти — вчитель географії"): without it the words may be a verb ("Ти допомагаєш…").
    rolePattern: new RegExp(
      String.raw`^\s*(?:[Тт]и|[Вв]и)\s*[—–-]\s*(?:${NAME},\s+)?(?<role>${roleUntil('який|яка|яке|і|та|з')})`,
      'u',
    ),
  },
};

/** Longer names are labels ("Support bot for the EU store"), not something to introduce oneself by. */
const MAX_NAME_WORDS = 4;
const MAX_ROLE_WORDS = 8;

export interface GreetingInput {
  /** The identity's display name; null for a session without an identity. */
  name: string | null;
  prompt: string | null;
  language: Language;
  /** The visitor has been here before (the service remembers something of them). */
  returning?: boolean;
  /** Their remembered name, when one is (memory.ts rememberedName). */
  visitorName?: string | null;
}

/** The role the prompt gives the agent in `language` ("a tour guide in Paris"); null when it states none there. */
export function roleFromPrompt(prompt: string | null, language: SpokenLanguage): string | null {
  const role = WORDS[language].rolePattern.exec(prompt ?? '')?.groups?.role?.trim();
  if (!role || role.split(/\s+/).length > MAX_ROLE_WORDS) return null;
  return role;
}

/** A name worth saying: short, with a letter, not a code ("ada_v2", "bot #3"). */
function speakableName(name: string | null): string | null {
  const trimmed = name?.trim().replace(/\s+/g, ' ') ?? '';
  if (!/\p{L}/u.test(trimmed) || /[_/@#\d]/.test(trimmed) || trimmed.split(' ').length > MAX_NAME_WORDS) return null;
  return trimmed;
}

export function greetingText({ name, prompt, language, returning = false, visitorName = null }: GreetingInput): string {
  const spoken: SpokenLanguage = language === 'auto' ? 'en' : language;
  const words = WORDS[spoken];
  let who = speakableName(name);
  const role = roleFromPrompt(prompt, spoken);
  // A name that only repeats the role ("Geography teacher") is a label: the role says it better.
  if (who && role?.toLowerCase().includes(who.toLowerCase())) who = null;
  const offer = returning ? `${words.again(visitorName)} ${words.offer}` : words.offer;
  if (!who && !role) return `${words.helloAlone} ${offer}`;
  return `${words.hello}, ${words.introduce(who, role)}. ${offer}`;
}

/** The greeting a session's dispatch plans: the start's own ("" for none), or the template's. */
export function plannedGreeting(
  metadata: Pick<ParsedDispatch, 'greeting' | 'identity' | 'language' | 'memory'>,
): string {
  return (
    metadata.greeting ??
    greetingText({
      name: metadata.identity?.name ?? null,
      prompt: metadata.identity?.prompt ?? null,
      language: metadata.language,
      returning: (metadata.memory?.facts.length ?? 0) > 0,
      visitorName: rememberedName(metadata.memory?.facts ?? []),
    })
  );
}

/**
 * A recorded session's notice (the start's `recording_notice`), said first and as given: only
 * when the session is recorded and the notice says something. Null otherwise.
 */
export function recordingNotice(metadata: { record?: boolean; recording_notice?: string | null }): string | null {
  const notice = metadata.record === true ? metadata.recording_notice?.trim() : undefined;
  return notice ? notice : null;
}
