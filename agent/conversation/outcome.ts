// The conversation's outcome (docs/api.md#outcomes): once the session has ended, the job asks the
// session's language model for the fields of the session's `outcome_schema`, filled from the
// transcript, as one JSON object of the written outcome's shape (every field, its value or null;
// src/contract/outcomes.ts), and reports it or why there is none. Like the summary: only for a
// conversation with a visitor turn, bounded in time, never before the session's end.
import { type OutcomeReport, outcomeFields, writtenOutcomeSchema } from '../../src/contract/index.ts';
import { answerJson, type ModelAnswer, unusableAnswerDetail } from '../providers/model-answer.ts';
import { askAboutConversation, type ConversationRead, spokenBy } from './summary.ts';

/** The outcome gets this long; then there is none (within agent/worker.ts JOB_SHUTDOWN_TIMEOUT_MS). */
export const OUTCOME_TIMEOUT_MS = 30_000;

export interface OutcomeRequest extends ConversationRead {
  /** The session's model, asked for JSON of a schema (agent/providers SessionProviders.writeJson). */
  writeJson(question: string, schema: Record<string, unknown>, timeoutMs: number): Promise<ModelAnswer>;
  /** The session's `outcome_schema`. */
  schema: Record<string, unknown>;
}

/**
 * The question: the transcript, then what to fill in. English whatever the conversation's
 * language: the fields' names and descriptions are the customer's, and the values are the
 * visitor's own words.
 */
export function outcomeQuestion(transcript: string, schema: Record<string, unknown>): string {
  const fields = outcomeFields(schema)
    .map((field) => `- ${field.name}${kindHint(field.schema)}: ${field.description}`)
    .join('\n');
  return `${transcript}\n\nFrom this conversation, fill in each field below with what the visitor said. Use the visitor's own words. Use null for every field the visitor did not state; never guess or invent a value.\n${fields}\n\nAnswer with one JSON object.`;
}

/** What a field holds, for the model: yes/no, one of a list, a number. */
function kindHint(schema: Record<string, unknown>): string {
  if (Array.isArray(schema.enum)) return ` (one of: ${schema.enum.join(', ')})`;
  if (schema.type === 'boolean') return ' (true or false)';
  if (schema.type === 'number' || schema.type === 'integer') return ' (a number)';
  return '';
}

/** Lower-case letters and digits only: how a value is looked for in what the visitor said. */
const plain = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}@.]+/gu, '');

/** The words of a text, lower-cased, an email address one word ("zofia@example.com"), a sentence's last dot dropped. */
const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}@.\-']+/u)
    .map((word) => word.replace(/^[.'-]+|[.'-]+$/g, ''))
    .filter(Boolean);

/** Whether `value`'s words come, in order and together, in `said` (words, not parts of words: "torres" is not in "elena@torres.es"). */
function saidInWords(value: string, said: string[]): boolean {
  const wanted = words(value);
  if (wanted.length === 0) return false;
  for (let i = 0; i + wanted.length <= said.length; i++)
    if (wanted.every((word, j) => said[i + j] === word)) return true;
  return false;
}

/**
 * The days of the week as each spoken language says them, for an enum of English day names: the
 * visitor who said "el martes" picked `tuesday` (lower-cased, accents kept as said).
 */
const WEEKDAYS: Record<string, string[]> = {
  monday: ['lunes', 'poniedziałek', 'понеділок'],
  tuesday: ['martes', 'wtorek', 'вівторок'],
  wednesday: ['miércoles', 'miercoles', 'środa', 'środę', 'середа', 'середу'],
  thursday: ['jueves', 'czwartek', 'четвер'],
  friday: ['viernes', 'piątek', "п'ятниця", "п'ятницю", 'пʼятниця', 'пʼятницю'],
  saturday: ['sábado', 'sabado', 'sobota', 'sobotę', 'субота', 'суботу'],
  sunday: ['domingo', 'niedziela', 'niedzielę', 'неділя', 'неділю'],
};

/** Whether an enum's value was said by either side, as itself or, for a day, in the conversation's language. */
function enumSaid(value: string, both: string): boolean {
  const said = plain(value);
  return both.includes(said) || (WEEKDAYS[said] ?? []).some((day) => both.includes(plain(day)));
}

/** A field that holds a person's name (`name`, `contact_name`, `nombre`), not a thing's (`company_name`, `product_name`). */
const holdsName = (name: string) => {
  const parts = name.split(/[_.\-\s]+|(?<=[a-z])(?=[A-Z])/).map((part) => part.toLowerCase());
  return (
    parts.some((part) => /^(name|nombre|imi[eę])$/.test(part)) &&
    !parts.some((part) =>
      /^(company|business|organi[sz]ation|org|product|brand|shop|store|team|project|event|pet|street|file|domain|account)$/.test(
        part,
      ),
    )
  );
};

/** The words of a field's name a conversation about it would use (`wants_demo`: wants, demo). */
const topicWords = (name: string) =>
  name
    .split(/[_.\-\s]+|(?<=[a-z])(?=[A-Z])/)
    .map(plain)
    .filter((word) => word.length >= 3);

/**
 * The model's values with each one the conversation does not support set to null: a small model
 * fills a grammar's every field, and invents what it cannot find. Free text must be words the
 * visitor said (whole words, case aside: not a part of an email address), and not a part of their name
 * in another field; an enum's value must have been said by either side (the agent's "Tuesday, then"; a
 * day in the conversation's language); a yes/no or a number only stands when its topic, a
 * word of the field's name, came up. Fields the answer lacks are null.
 */
export function groundedValues(
  answer: Record<string, unknown>,
  schema: Record<string, unknown>,
  spoken: { visitor: string; both: string },
): { values: Record<string, unknown>; dropped: string[] } {
  const visitor = words(spoken.visitor);
  const both = plain(spoken.both);
  const values: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const field of outcomeFields(schema)) {
    const value = answer[field.name] ?? null;
    const { type, enum: choices } = field.schema;
    const supported =
      value === null ||
      (Array.isArray(choices)
        ? enumSaid(String(value), both)
        : type === 'string'
          ? typeof value === 'string' && saidInWords(value, visitor)
          : topicWords(field.name).some((word) => both.includes(word)));
    values[field.name] = supported ? value : null;
    if (!supported) dropped.push(field.name);
  }
  // A part of the visitor's name is not another field's value: the offline model took "Lena
  // Fischer"'s surname for her company (bench/outcomes). A value all of whose words are in a
  // name field's value goes, unless its own field holds a name.
  const nameWords = new Set(
    Object.entries(values).flatMap(([name, value]) =>
      holdsName(name) && typeof value === 'string' ? words(value) : [],
    ),
  );
  for (const [name, value] of Object.entries(values)) {
    if (holdsName(name) || typeof value !== 'string') continue;
    const its = words(value);
    if (its.length > 0 && its.every((word) => nameWords.has(word))) {
      values[name] = null;
      dropped.push(name);
    }
  }
  return { values, dropped };
}

/**
 * The outcome report of a conversation, or null when the visitor never said anything (the
 * control plane expects none). Never throws: a failure is a report without values.
 */
export async function writeOutcome(request: OutcomeRequest): Promise<OutcomeReport | null> {
  const { history, schema, logger } = request;
  const asked = await askAboutConversation(request, OUTCOME_TIMEOUT_MS, (transcript, timeoutMs) =>
    request.writeJson(outcomeQuestion(transcript, schema), writtenOutcomeSchema(schema), timeoutMs),
  );
  if (asked === null) return null;
  const { answer, ms, timeoutMs } = asked;
  const parsed = answerJson(answer);
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    const spoken = { visitor: spokenBy(history, ['user']), both: spokenBy(history, ['user', 'assistant']) };
    const { values, dropped } = groundedValues(parsed as Record<string, unknown>, schema, spoken);
    logger.info({ ms, fields: Object.keys(values).length, dropped }, 'outcome written');
    return { type: 'outcome', values };
  }
  const detail = unusableAnswerDetail(answer, timeoutMs, 'the language model wrote no JSON object');
  logger.warn({ ms, detail, err: answer.failure }, 'no outcome');
  return { type: 'outcome', values: null, detail };
}
