// What the service remembers of a returning visitor (docs/api.md#visitors): a short list of facts
// in plain words ("Her name is Zofia.", "She is allergic to peanuts."), kept per visitor of an
// account, per identity or shared by the account's identities (`memory_scope`). A session with a
// visitor and memory on is dispatched with what is remembered in its scope; its job reads them to
// the model as quoted data and, once the session ended, writes the updated list with the session's
// model and reports it. The bounds below hold on every side: the job's schema, the report's check,
// the API's PATCH.
import { type Static, Type } from '@sinclair/typebox';
import { literalUnion } from './schema-parts.ts';

/** Facts kept per visitor and scope: the newest win. */
export const MEMORY_MAX_FACTS = 20;
/** Characters of one fact. */
export const MEMORY_FACT_MAX_CHARS = 300;
/** The customer's own id for a person: at most this many characters. */
export const VISITOR_ID_MAX_CHARS = 128;

/** `identity`: this identity's sessions remember this visitor; `account`: all of the account's identities share it. */
export const MEMORY_SCOPES = ['identity', 'account'] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];
export const MemoryScopeSchema = literalUnion(MEMORY_SCOPES);

export const MemoryFact = Type.String({ minLength: 1, maxLength: MEMORY_FACT_MAX_CHARS });

/** On the dispatch of a session with a visitor and memory on: what was remembered, oldest first (maybe none). */
export const DispatchMemory = Type.Object({
  facts: Type.Array(MemoryFact, { maxItems: MEMORY_MAX_FACTS }),
});
export type DispatchMemory = Static<typeof DispatchMemory>;

/**
 * The job's updated list of facts once the session ended (sent only for a session with memory
 * on and a visitor turn): what still holds of the remembered ones and what this conversation
 * taught, or null with why when it could not be written (what was remembered then stays).
 */
export const MemoryReport = Type.Object({
  type: Type.Literal('memory'),
  facts: Type.Union([Type.Array(MemoryFact, { maxItems: MEMORY_MAX_FACTS }), Type.Null()]),
  detail: Type.Optional(Type.String({ maxLength: 500 })),
});
export type MemoryReport = Static<typeof MemoryReport>;

/**
 * Facts one conversation may add: the offline model, under a grammar that allowed 20, went on
 * listing inventions until its 30 s were up (bench/memory).
 */
export const MEMORY_NEW_FACTS_MAX = 6;

/** The schema the job asks its model to answer in (OpenAI's strict structured output, the offline model's grammar). */
export const MEMORY_ANSWER_SCHEMA = {
  type: 'object',
  properties: {
    facts: { type: 'array', items: { type: 'string' }, maxItems: MEMORY_NEW_FACTS_MAX },
  },
  required: ['facts'],
  additionalProperties: false,
} as const;

/** Whitespace collapsed and trimmed, so the same fact written twice is kept once. */
export function normalizedFact(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
