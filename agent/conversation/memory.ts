// What the job remembers of a returning visitor (docs/api.md#visitors; src/contract/visitor-memory.ts).
// While the conversation runs, what was remembered reaches the model as quoted data (data about
// the visitor, never instructions; quoted-data.ts). Once it ended, the session's model writes the
// facts this conversation taught, in the shape MEMORY_ANSWER_SCHEMA (the offline model under its
// grammar, a cloud one in structured output); each must rest on words the visitor said, and the
// result is merged with what was remembered here, in code, so a small model that forgets an old
// fact does not lose it: a remembered fact goes only when a new one is about the same thing.
import {
  MEMORY_ANSWER_SCHEMA,
  MEMORY_FACT_MAX_CHARS,
  MEMORY_MAX_FACTS,
  MEMORY_NEW_FACTS_MAX,
  type MemoryReport,
  normalizedFact,
} from '../../src/contract/index.ts';
import { answerJson, type ModelAnswer, unusableAnswerDetail } from '../providers/model-answer.ts';
import { askAboutConversation, type ConversationRead, spokenBy } from './summary.ts';

/** The memory gets this long; then what was remembered stays as it was (within agent/worker.ts JOB_SHUTDOWN_TIMEOUT_MS). */
export const MEMORY_TIMEOUT_MS = 30_000;

export interface MemoryRequest extends ConversationRead {
  writeJson(question: string, schema: Record<string, unknown>, timeoutMs: number): Promise<ModelAnswer>;
  /** What was remembered before this session, oldest first. */
  remembered: readonly string[];
}

/**
 * The question: the conversation, what to write with one example (the offline model wrote `[]`
 * for most conversations without one; its facts are grounded, so the example's own words never
 * stay), then what was remembered, not to be written again.
 */
export function memoryQuestion(remembered: readonly string[], transcript: string): string {
  const before =
    remembered.length > 0
      ? `\n\nAlready remembered (do not write these again):\n${remembered.map((fact) => `- ${fact}`).join('\n')}`
      : '';
  return `Conversation:\n${transcript}\n\nWhat did the visitor tell about themselves in this conversation: their name, their family, what they like, need or cannot have, what they asked for, what was promised to them? Write each as one short sentence about the visitor, with the visitor's own words. For example, "I'm Tom and I hate cilantro" gives {"facts": ["The visitor's name is Tom.", "The visitor hates cilantro."]}. Write nothing the visitor did not say. At most ${MEMORY_NEW_FACTS_MAX} facts.${before}\n\nAnswer with one JSON object: {"facts": [...]}.`;
}

/** Words that say nothing of what a fact is about: they neither ground a fact nor make two facts one topic. */
const COMMON = new Set(
  'visitor visitors user their they them this that these with have wants want would will about from also said says asked told likes like prefers needs need does were been being some when what which where name'
    .split(' ')
    .concat('visitante usuario quiere tiene para como este esta pero porque cuando donde'.split(' ')),
);

/** The words of a fact that say what it is about: letters and digits, four or more, not common. */
function topicWords(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? [];
  return new Set(words.filter((word) => !COMMON.has(word)));
}

/** A name stated in a fact ("Her name is Zofia", "se llama Zofia"), lower-cased: two names are one topic. */
const NAMED = /(?<!\p{L})(?:name|llama|nombre|nazywa|nazywam|звати)(?!\p{L})/iu;

/** How a visitor says their name: "My name is Marta", "I'm Marta", "Me llamo Lucía", "Nazywam się Ola", "Мене звати Оля". */
const STATES_NAME =
  /(?<!\p{L})(?:[Mm]y name is|[Ii]'m|[Ii] am|[Cc]all me|[Mm]e llamo|[Mm]i nombre es|[Ss]oy|[Nn]azywam się|[Mm]am na imię|[Мм]ене звати)\s+(\p{Lu}[\p{Ll}'-]+)/u;
/** Capitalised words that follow "I'm" without being a name. */
const NOT_NAMES = new Set([
  'The',
  'A',
  'An',
  'Not',
  'So',
  'Just',
  'Here',
  'Back',
  'Fine',
  'Good',
  'Sorry',
  'Also',
  'Very',
  'Really',
  'In',
  'At',
  'From',
  'On',
  'Looking',
  'Interested',
]);

/**
 * The name the visitor stated, by a rule rather than the model: the offline model missed "I'm
 * Marta" in most conversations (bench/memory), and a name is what a returning visitor is greeted by.
 */
export function statedName(visitorSaid: string): string | null {
  const name = STATES_NAME.exec(visitorSaid)?.[1];
  return name && !NOT_NAMES.has(name) ? name : null;
}

/** The newest name the facts remember ("The visitor's name is Marta."), for the greeting. */
export function rememberedName(facts: readonly string[]): string | null {
  for (const fact of [...facts].reverse()) {
    const name = /name is (\p{Lu}[\p{Ll}'-]+)/u.exec(fact)?.[1];
    if (name) return name;
  }
  return null;
}

/**
 * Whether `fact` says again what `earlier` said: two thirds of its topic words are earlier's.
 * The offline model wrote one wish four ways ("likes / needs / asks for / promised to a chocolate
 * cake without peanuts"); "hates peanuts" beside them shares one word of two, and stays.
 */
function restates(fact: Set<string>, earlier: Set<string>): boolean {
  if (fact.size === 0) return false;
  let shared = 0;
  for (const word of fact) if (earlier.has(word)) shared++;
  return shared * 3 >= fact.size * 2;
}

/**
 * The merged list: the new facts that rest on a word the visitor said (a small model invents,
 * and copies the agent's words), each once (a restatement of an earlier new fact is dropped), then
 * each remembered fact that no new fact is about (sharing a topic word, or both stating a name),
 * oldest first, the newest MEMORY_MAX_FACTS kept.
 */
export function mergedFacts(remembered: readonly string[], written: readonly unknown[], visitorSaid: string): string[] {
  const said = topicWords(visitorSaid);
  const seen = new Set(remembered.map((fact) => normalizedFact(fact).toLowerCase()));
  const fresh: string[] = [];
  for (const item of written) {
    if (typeof item !== 'string') continue;
    const fact = normalizedFact(item).slice(0, MEMORY_FACT_MAX_CHARS);
    const key = fact.toLowerCase();
    if (!fact || seen.has(key)) continue;
    const words = topicWords(fact);
    if (![...words].some((word) => said.has(word))) continue;
    if (fresh.some((earlier) => restates(words, topicWords(earlier)))) continue;
    seen.add(key);
    fresh.push(fact);
  }
  const replaced = (old: string) => {
    const oldWords = topicWords(old);
    return fresh.some(
      (fact) => (NAMED.test(old) && NAMED.test(fact)) || [...topicWords(fact)].some((word) => oldWords.has(word)),
    );
  };
  const kept = remembered.filter((fact) => !replaced(fact));
  return [...kept, ...fresh].slice(-MEMORY_MAX_FACTS);
}

/**
 * The memory report of a conversation, or null when the visitor never said anything (what was
 * remembered stays; the control plane expects none). Never throws: a failure is a report without facts.
 */
export async function writeMemory(request: MemoryRequest): Promise<MemoryReport | null> {
  const { history, remembered, logger } = request;
  const asked = await askAboutConversation(request, MEMORY_TIMEOUT_MS, (transcript, timeoutMs) =>
    request.writeJson(memoryQuestion(remembered, transcript), { ...MEMORY_ANSWER_SCHEMA }, timeoutMs),
  );
  if (asked === null) return null;
  const { answer, ms, timeoutMs } = asked;
  const written = (answerJson(answer) as { facts?: unknown } | null | undefined)?.facts;
  // Out of time midway (a slow model on a busy machine): the facts it had finished still count.
  const cut = written === undefined && answer.timedOut ? finishedFacts(answer.text) : [];
  if (Array.isArray(written) || cut.length > 0) {
    const said = spokenBy(history, ['user']);
    const list: unknown[] = Array.isArray(written) ? written : cut;
    // The name the visitor stated, as the greeting reads it, unless the model wrote it so already.
    const name = statedName(said);
    const named = name && !list.some((fact) => typeof fact === 'string' && rememberedName([fact]) === name);
    const facts = mergedFacts(remembered, named ? [`The visitor's name is ${name}.`, ...list] : list, said);
    logger.info({ ms, remembered: remembered.length, facts: facts.length, cut: cut.length > 0 }, 'memory written');
    return { type: 'memory', facts };
  }
  const detail = unusableAnswerDetail(answer, timeoutMs, 'the language model wrote no list of facts');
  logger.warn({ ms, detail, err: answer.failure }, 'no memory');
  return { type: 'memory', facts: null, detail };
}

/** The list's complete strings in an answer cut short (`{"facts": ["A.", "B.", "C` → A., B.). */
export function finishedFacts(text: string): string[] {
  const list = text.indexOf('[', text.indexOf('"facts"'));
  if (text.indexOf('"facts"') < 0 || list < 0) return [];
  const facts: string[] = [];
  for (const match of text.slice(list).matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
    try {
      facts.push(JSON.parse(`"${match[1]}"`) as string);
    } catch {
      // An escape cut in half: the rest is unfinished.
      break;
    }
  }
  return facts;
}
