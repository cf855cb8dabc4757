// What a conversation leaves behind once it is closed: its summary (summary.ts), when the
// session asked for one its outcome (outcome.ts), and with a remembered visitor what to remember
// of them (memory.ts), each written with the session's model from what the session kept, and
// reported once the session is over (reportAfterwards).
import type { llm } from '@livekit/agents';
import type {
  MemoryReport,
  OutcomeReport,
  ParsedDispatch,
  SpokenLanguage,
  SummaryReport,
} from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import type { SessionProviders } from '../providers/index.ts';
import { deliver, type Reporter } from '../reports/index.ts';
import { type LivekitAccess, sessionOver } from '../room-at-livekit.ts';
import { writeMemory } from './memory.ts';
import { writeOutcome } from './outcome.ts';
import { CLOUD_SUMMARY_CHARS, OFFLINE_SUMMARY_CHARS, writeSummary } from './summary.ts';

export interface Afterwards {
  /** The conversation's summary; null without a visitor turn. */
  summary(): Promise<SummaryReport | null>;
  /** Its outcome; null without an outcome schema or a visitor turn. */
  outcome(): Promise<OutcomeReport | null>;
  /** What to remember of the visitor; null without memory or a visitor turn. */
  memory(): Promise<MemoryReport | null>;
}

export function afterwards(
  providers: SessionProviders,
  history: () => llm.ChatContext,
  metadata: Pick<ParsedDispatch, 'outcome_schema' | 'memory'>,
  /** The language the agent spoke last, read when they are written. */
  language: () => SpokenLanguage,
  logger: AgentLogger,
): Afterwards {
  // The offline model's context is small: it reads the newest part of a long conversation.
  const transcriptChars = providers.names.llm === 'offline' ? OFFLINE_SUMMARY_CHARS : CLOUD_SUMMARY_CHARS;
  return {
    summary: () =>
      writeSummary({ model: providers.llm, history: history(), language: language(), transcriptChars, logger }),
    outcome: async () =>
      metadata.outcome_schema
        ? writeOutcome({
            writeJson: providers.writeJson,
            history: history(),
            schema: metadata.outcome_schema,
            language: language(),
            transcriptChars,
            logger,
          })
        : null,
    memory: async () =>
      metadata.memory
        ? writeMemory({
            writeJson: providers.writeJson,
            history: history(),
            remembered: metadata.memory.facts,
            language: language(),
            transcriptChars,
            logger,
          })
        : null,
  };
}

/** Writing and reporting them all taking longer than this is worth a warning (a full run's logs show warnings only). */
const SLOW_AFTERWARDS_MS = 15_000;

type WrittenReport = SummaryReport | OutcomeReport | MemoryReport;

/** Writes one of them and reports it (a few tries). */
async function reportWritten<R extends WrittenReport>(
  write: () => Promise<R | null>,
  reporter: Reporter<R>,
  logger: AgentLogger,
): Promise<void> {
  const report = await write();
  if (report && !(await deliver(reporter, report)))
    logger.warn({ report: report.type }, 'a report could not be delivered');
}

export interface AfterwardsReport {
  afterwards: Afterwards;
  access: LivekitAccess;
  roomName: string;
  /** Read when the job leaves (agents-adapter stoppedByWorker). */
  stoppedByWorker: () => boolean;
  reporter: Reporter<WrittenReport>;
  logger: AgentLogger;
}

/**
 * Once the session is over, writes and reports its summary, outcome and memory, in that order;
 * nothing when the session goes on with another agent.
 */
export async function reportAfterwards({
  afterwards,
  access,
  roomName,
  stoppedByWorker,
  reporter,
  logger,
}: AfterwardsReport): Promise<void> {
  const startedAt = performance.now();
  if (!(await sessionOver(access, roomName, stoppedByWorker(), logger))) {
    logger.info('the session goes on: its summary is left to the next agent');
    return;
  }
  await reportWritten(afterwards.summary, reporter, logger);
  await reportWritten(afterwards.outcome, reporter, logger);
  await reportWritten(afterwards.memory, reporter, logger);
  const ms = Math.round(performance.now() - startedAt);
  if (ms > SLOW_AFTERWARDS_MS) logger.warn({ ms }, 'what the conversation leaves behind took long');
}
