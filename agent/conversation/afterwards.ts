// What a conversation leaves behind once it is closed: its summary (summary.ts), when the
// session asked for one its outcome (outcome.ts), and with a remembered visitor what to remember
// of them (memory.ts), each written with the session's model from
// what the session kept.
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
