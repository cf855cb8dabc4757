// Answers from the session's documents (docs/api.md#documents): for each visitor turn, spoken
// or typed, the job asks the control plane for the passages closest to what was said (POST
// knowledge_url) and puts them in that turn's context: the passages as quoted data right before
// the visitor's message (quoted-data.ts: a document's text never has the instructions' rank),
// and the rule to answer from them as an instruction after it (the offline prompt reads an
// instruction there as the reply's own: smallModelPrompt). Retrieval is bounded
// (KNOWLEDGE_TIMEOUT_MS): a slow or failed one leaves the turn without passages, never without
// a reply. The agent turn that answers records which documents were in its context, and its
// metrics how long retrieval took.
import { llm } from '@livekit/agents';
import { Value } from '@sinclair/typebox/value';
import {
  KNOWLEDGE_QUERY_MAX_CHARS,
  KnowledgeAnswer,
  type KnowledgePassage,
  type KnowledgeRequest,
  type SpokenLanguage,
} from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import { addQuotedData, fromDocument, lastVisitorMessage } from './quoted-data.ts';

/** A retrieval slower than this is given up: the turn goes on without passages. */
export const KNOWLEDGE_TIMEOUT_MS = 1_500;

/** What the offline model is given of a turn's passages at most (the best one, cut at a word). */
export const OFFLINE_KNOWLEDGE_CHARS = 700;

/** "I do not know", in each language: the model is shown the words to use. */
const DO_NOT_KNOW: Record<SpokenLanguage, string> = {
  en: "I'm sorry, I don't know that.",
  es: 'Lo siento, no lo sé.',
  pl: 'Przepraszam, nie wiem tego.',
  uk: 'Вибачте, я цього не знаю.',
};

/**
 * What a turn is told of its passages (also the knowledge bench's): answer from them when they
 * are relevant, and say you do not know when they do not hold the answer. Our words only: the
 * passages themselves are quoted data (knowledgeData).
 */
export function knowledgeInstruction(passages: readonly KnowledgePassage[], language: SpokenLanguage): string {
  if (passages.length === 0)
    // Without it the offline model made answers up for what the documents do not cover (bench/knowledge).
    return `None of your documents covers what the visitor just said. If it is a question of fact you cannot answer, say that you do not know ("${DO_NOT_KNOW[language]}") instead of guessing.`;
  return `The lines "From the document" just before the visitor's message are passages from your documents that may answer them. Answer from these passages when they are relevant. If they do not contain the answer, say that you do not know ("${DO_NOT_KNOW[language]}") instead of guessing.`;
}

/**
 * The offline model's rule for documents, in its instructions for the whole session instead of
 * each turn's (knowledgeInstruction): a turn's own instruction is merged into the instructions
 * it reads (smallModelPrompt), so everything after their start was read again each turn, the
 * tools' documentation included: with a tool and a document, the first word came 1.8–2.5 s
 * after the question instead of ~0.3 s (npm start, 12-04). Without the "say you do not know"
 * of the turn's rule: standing, it made the 0.5B model answer "I'm sorry, I don't know that." to
 * an order lookup instead of calling the tool (2 of 2), and it said it to none of the
 * unanswerable questions of bench/knowledge either way.
 */
export function standingKnowledgeRule(): string {
  return 'Lines that start with "From the document", just before the visitor\'s message, are passages from your documents that may answer them. Answer from these passages when they are relevant.';
}

/** A turn's passages as quoted data, one attributed line each, best first. */
export function knowledgeData(passages: readonly KnowledgePassage[]): string[] {
  return passages.map((passage) => fromDocument(passage.document_name, passage.text));
}

/** The id of the instruction added for a visitor's message: added once, also when a tool's result is answered. */
const instructionId = (messageId: string) => `knowledge_${messageId}`;

/**
 * Puts a turn's passages in `chatCtx` around the visitor's `message`: quoted before it, the
 * rule after it (also when a tool's call and result followed it). Once per message.
 */
export function addPassages(
  chatCtx: llm.ChatContext,
  message: llm.ChatMessage,
  passages: readonly KnowledgePassage[],
  language: SpokenLanguage,
  { standingRule = false } = {},
): void {
  if (chatCtx.getById(instructionId(message.id))) return;
  addQuotedData(chatCtx, `knowledge_data_${message.id}`, knowledgeData(passages), message);
  // The rule is in the instructions already (standingKnowledgeRule): the passages alone.
  if (standingRule) return;
  const instruction = llm.ChatMessage.create({
    id: instructionId(message.id),
    role: 'system',
    content: knowledgeInstruction(passages, language),
  });
  chatCtx.items.splice((chatCtx.indexById(message.id) ?? chatCtx.items.length - 1) + 1, 0, instruction);
}

export interface Retrieved {
  passages: KnowledgePassage[];
  /** How long the retrieval took, as the job waited for it (ms). */
  retrievalMs: number;
  /** The control plane answered (perhaps with no passage); false when it failed or was too slow. */
  answered: boolean;
}

export interface KnowledgeOptions {
  url: string;
  reportToken: string;
  language(): SpokenLanguage;
  logger: Pick<AgentLogger, 'warn'>;
  fetch?: typeof fetch;
  timeoutMs?: number;
  now?: () => number;
  /** The rule for passages is in the instructions (standingKnowledgeRule): a turn adds its passages only. */
  standingRule?: boolean;
  /** At most this much passage text in a turn (best first; the last one cut at a word). Unset: all the control plane sent. */
  maxChars?: number;
}

/** The best passages that fit in `maxChars`; at least the first, cut at a word. */
export function fitPassages(passages: readonly KnowledgePassage[], maxChars: number): KnowledgePassage[] {
  const kept: KnowledgePassage[] = [];
  let left = maxChars;
  for (const passage of passages) {
    if (passage.text.length <= left) {
      kept.push(passage);
      left -= passage.text.length;
      continue;
    }
    if (kept.length === 0) kept.push({ ...passage, text: passage.text.slice(0, maxChars).replace(/\s+\S*$/, '') });
    break;
  }
  return kept;
}

/** One retrieval; no passages on any failure (logged). */
export async function retrievePassages(query: string, options: KnowledgeOptions): Promise<Retrieved> {
  const now = options.now ?? (() => performance.now());
  const started = now();
  const done = (passages: KnowledgePassage[], answered = false) => ({
    passages,
    retrievalMs: Math.round(now() - started),
    answered,
  });
  const request: KnowledgeRequest = { query: query.slice(0, KNOWLEDGE_QUERY_MAX_CHARS) };
  try {
    const response = await (options.fetch ?? fetch)(options.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.reportToken}` },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(options.timeoutMs ?? KNOWLEDGE_TIMEOUT_MS),
    });
    const body = await response.json().catch(() => null);
    if (!response.ok || !Value.Check(KnowledgeAnswer, body)) {
      options.logger.warn({ status: response.status }, 'the knowledge retrieval was refused; answering without');
      return done([]);
    }
    return done(options.maxChars ? fitPassages(body.passages, options.maxChars) : body.passages, true);
  } catch (error) {
    options.logger.warn({ err: error }, 'no passages in time; answering without');
    return done([]);
  }
}

/** What an agent turn answering a visitor's turn reports of its passages. */
export interface TurnKnowledge {
  documentIds: string[];
  /** Reported with the first reply to the message only (a tool's follow-up retrieves nothing). */
  retrievalMs?: number;
}

/** Visitor messages whose passages are kept for their replies: more than a conversation has in flight. */
const MESSAGES_KEPT = 16;

/**
 * Retrieves once per visitor message and adds the passages to each reply's context after that
 * message. Called from the agent's llm node: typed chat (generateReply) never passes through
 * onUserTurnCompleted, but every reply passes through the node.
 */
export class KnowledgeTurns {
  readonly #options: KnowledgeOptions;
  /** The last visitor message retrieved for, and its passages (a tool's follow-up reply reuses them). */
  #last: { messageId: string; retrieved: Promise<Retrieved> } | null = null;
  /** Each visitor message's passages, by its id, for the replies that answer it. */
  readonly #found = new Map<string, TurnKnowledge>();

  constructor(options: KnowledgeOptions) {
    this.#options = options;
  }

  /** Adds the passages for the reply about to be generated from `chatCtx` (its last visitor message's). */
  async addTo(chatCtx: llm.ChatContext): Promise<void> {
    const message = lastVisitorMessage(chatCtx);
    const query = message?.textContent?.trim();
    if (!message || !query) return;
    if (chatCtx.getById(instructionId(message.id))) return;
    if (this.#last?.messageId !== message.id)
      this.#last = { messageId: message.id, retrieved: retrievePassages(query, this.#options) };
    const { passages, retrievalMs, answered } = await this.#last.retrieved;
    if (!this.#found.has(message.id)) {
      this.#found.set(message.id, {
        documentIds: [...new Set(passages.map((passage) => passage.document_id))],
        retrievalMs,
      });
      for (const old of this.#found.keys()) if (this.#found.size > MESSAGES_KEPT) this.#found.delete(old);
    }
    // A failed retrieval says nothing; an answered one without passages says the documents do not cover it.
    if (answered)
      addPassages(chatCtx, message, passages, this.#options.language(), { standingRule: this.#options.standingRule });
  }

  /**
   * The documents of the generated `reply` (an item of `history`, the session's): the passages of
   * the visitor message it follows. Found by place, not by order of arrival: a greeting finishing
   * after the visitor typed, or a message typed twice, does not take another reply's documents.
   * Null: nothing was retrieved for that message.
   */
  forReply(history: llm.ChatContext, reply: llm.ChatItem): TurnKnowledge | null {
    const at = history.indexById(reply.id);
    const message = at === undefined ? undefined : lastVisitorMessage(history, at);
    const found = message && this.#found.get(message.id);
    if (!found) return null;
    const { retrievalMs, ...documents } = found;
    delete found.retrievalMs;
    return retrievalMs === undefined ? documents : { ...documents, retrievalMs };
  }
}
