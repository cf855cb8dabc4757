// The conversation's summary (docs/api.md#sessions-summary): once the session has ended, the
// job asks the session's own language model (the offline one, or the cloud one) for at most
// three sentences in the session's language, and reports them (or why there are none) to the
// control plane. Only for a conversation with a visitor turn; bounded in time, and never
// before the session's end: the job's room is gone by then, and its last meter reports go
// out beside it.
import type { llm } from '@livekit/agents';
import type { SpokenLanguage, SummaryReport } from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import { askModel, type ModelAnswer, missingAnswerDetail } from '../providers/model-answer.ts';

/**
 * The summary gets this long, retries included; then there is none. The job's process waits
 * for it, within the time its worker gives a job to leave (agent/worker.ts JOB_SHUTDOWN_TIMEOUT_MS).
 * The offline model took over 15 s beside other work on two cores (a full test run).
 */
export const SUMMARY_TIMEOUT_MS = 30_000;
export const SUMMARY_MAX_SENTENCES = 3;
/**
 * The transcript's newest characters the model reads: the offline model has a 2,048-token
 * context (its answer included); a cloud one reads a long conversation whole.
 */
export const OFFLINE_SUMMARY_CHARS = 4_000;
export const CLOUD_SUMMARY_CHARS = 60_000;
/** Characters of the SummaryReport's text (src/contract/job-reports.ts allows 2,000). */
const SUMMARY_MAX_CHARS = 1_000;

/** What the model is told, per language: the summary is in the session's language. */
const INSTRUCTIONS: Record<SpokenLanguage, string> = {
  en: 'Summarise this conversation between a visitor and an assistant in at most three short sentences, in English. Say what the visitor wanted and what they were told. Write only the summary.',
  es: 'Resume esta conversación entre un visitante y un asistente en tres frases cortas como máximo, en español. Di qué quería el visitante y qué se le respondió. Escribe solo el resumen.',
  pl: 'Streść tę rozmowę między gościem a asystentem w najwyżej trzech krótkich zdaniach, po polsku. Napisz, czego chciał gość i co mu odpowiedziano. Napisz tylko streszczenie.',
  uk: 'Підсумуй цю розмову між відвідувачем і асистентом щонайбільше трьома короткими реченнями, українською мовою. Скажи, чого хотів відвідувач і що йому відповіли. Напиши лише підсумок.',
};

/** How the transcript names the two sides, per language. */
const SPEAKERS: Record<SpokenLanguage, { visitor: string; agent: string }> = {
  en: { visitor: 'Visitor', agent: 'Assistant' },
  es: { visitor: 'Visitante', agent: 'Asistente' },
  pl: { visitor: 'Gość', agent: 'Asystent' },
  uk: { visitor: 'Відвідувач', agent: 'Асистент' },
};

/** What each writer after the conversation (the summary, outcome.ts, memory.ts) is given of it. */
export interface ConversationRead {
  /** The conversation as the session kept it (AgentSession.history). */
  history: llm.ChatContext;
  /** The language the agent spoke last: pinned, or in auto mode the visitor's. */
  language: SpokenLanguage;
  /** The transcript's newest characters the model is shown (the offline model's context is small). */
  transcriptChars: number;
  timeoutMs?: number;
  logger: AgentLogger;
}

export interface SummaryRequest extends ConversationRead {
  /** The session's language model. */
  model: llm.LLM;
}

/**
 * The visitor's and the agent's turns, oldest first, as `Speaker: text` lines, from the
 * visitor's first: what the agent said before (its greeting) tells nothing, and the small
 * offline model answered a greeting's question instead of summarising ("¿En qué puedo ayudarte?").
 */
function transcriptLines(history: llm.ChatContext, language: SpokenLanguage): string[] {
  const names = SPEAKERS[language];
  const lines: string[] = [];
  for (const item of history.items) {
    if (item.type !== 'message' || (item.role !== 'user' && item.role !== 'assistant')) continue;
    if (item.role === 'assistant' && lines.length === 0) continue;
    const text = (item.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (text) lines.push(`${item.role === 'user' ? names.visitor : names.agent}: ${text}`);
  }
  return lines;
}

/**
 * What a model reads of the conversation: the transcript's newest `transcriptChars` characters,
 * one `Speaker: text` line a turn. Null when the visitor never said anything: nothing to write.
 */
export function transcriptToRead({ history, language, transcriptChars }: ConversationRead): string | null {
  if (!hasVisitorTurn(history)) return null;
  return transcriptLines(history, language).join('\n').slice(-transcriptChars);
}

/** A model's answer about a conversation, how long it took, and the time it had. */
export interface ConversationAnswer {
  answer: ModelAnswer;
  ms: number;
  timeoutMs: number;
}

/**
 * The start every writer after the conversation shares: `ask` is given the transcript and the
 * request's time (else `defaultTimeoutMs`), and timed. Null when the visitor never said anything.
 */
export async function askAboutConversation(
  request: ConversationRead,
  defaultTimeoutMs: number,
  ask: (transcript: string, timeoutMs: number) => Promise<ModelAnswer>,
): Promise<ConversationAnswer | null> {
  const transcript = transcriptToRead(request);
  if (transcript === null) return null;
  const timeoutMs = request.timeoutMs ?? defaultTimeoutMs;
  const startedAt = performance.now();
  const answer = await ask(transcript, timeoutMs);
  return { answer, ms: Math.round(performance.now() - startedAt), timeoutMs };
}

/** Everything the visitor (and, with `assistant`, the agent) said or typed, in order. */
export function spokenBy(history: llm.ChatContext, roles: string[]): string {
  return history.items
    .map((item) => (item.type === 'message' && roles.includes(item.role) ? (item.textContent ?? '') : ''))
    .join('\n');
}

function hasVisitorTurn(history: llm.ChatContext): boolean {
  return history.items.some(
    (item) => item.type === 'message' && item.role === 'user' && (item.textContent ?? '').trim() !== '',
  );
}

/** The first `most` sentences of a model's answer, without a leading "Summary:" and with plain spaces. */
export function firstSentences(text: string, most = SUMMARY_MAX_SENTENCES): string {
  const plain = text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^(summary|resumen|streszczenie|підсумок)\s*:\s*/i, '');
  const sentences = plain.match(/[^.!?…]+(?:[.!?…]+["')\]»]*|$)/g) ?? [];
  const kept = sentences
    .slice(0, most)
    .map((s) => s.trim())
    .filter(Boolean)
    .join(' ');
  return kept.length <= SUMMARY_MAX_CHARS ? kept : `${kept.slice(0, SUMMARY_MAX_CHARS - 1).trimEnd()}…`;
}

/**
 * The summary report of a conversation, or null when the visitor never said anything (nothing
 * to summarise: the control plane expects none). Never throws: a failure is a report without text.
 */
export async function writeSummary(request: SummaryRequest): Promise<SummaryReport | null> {
  const { model, language, logger } = request;
  // One turn, the instruction after the transcript: given it first (as instructions), the
  // offline model went on with the conversation ("Yes, I'm still there." after an idle
  // question) in 3 of 3 tries; given it last, it summarised all 3.
  const asked = await askAboutConversation(request, SUMMARY_TIMEOUT_MS, (transcript, timeoutMs) =>
    askModel(model, `${transcript}\n\n${INSTRUCTIONS[language]}`, timeoutMs),
  );
  if (asked === null) return null;
  const { answer, ms, timeoutMs } = asked;
  const summary = firstSentences(answer.text);
  if (summary && !answer.timedOut) {
    logger.info({ ms, chars: summary.length, language }, 'summary written');
    return { type: 'summary', text: summary };
  }
  const detail = missingAnswerDetail(answer, timeoutMs);
  logger.warn({ ms, detail, err: answer.failure }, 'no summary');
  return { type: 'summary', text: null, detail };
}
