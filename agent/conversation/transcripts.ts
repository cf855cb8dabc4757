// The conversation's turns, sent to the control plane as they are committed to the chat
// history (user turns once transcribed, agent turns once spoken or cut off), and the tools'
// calls as they end (tool turns). Each turn
// carries its id, so a report delivered twice is stored once.
import type { ToolCallRecord, TranscriptReport } from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import { type Reporter, ReportSender } from '../reports/index.ts';

export class TranscriptLog {
  readonly #sender: ReportSender<TranscriptReport>;

  constructor(reporter: Reporter<TranscriptReport>, logger: Pick<AgentLogger, 'warn'>) {
    this.#sender = new ReportSender(reporter, (report) =>
      logger.warn({ turn_id: report.turn_id, role: report.role }, 'a transcript turn could not be delivered'),
    );
  }

  record(turn: Omit<TranscriptReport, 'type'>): void {
    if (!turn.text.trim()) return;
    this.#sender.send({ type: 'transcript', ...turn });
  }

  /** A tool call as a `tool` turn (its result excerpt as the text), once the call is over. */
  recordToolCall(call: ToolCallRecord): void {
    const ended = Date.now();
    this.record({
      turn_id: `tool_${call.call_id}`.slice(0, 200),
      role: 'tool',
      text: call.result_excerpt || call.outcome,
      language: null,
      interrupted: false,
      started_at: new Date(ended - call.duration_ms).toISOString(),
      ended_at: new Date(ended).toISOString(),
      tool_call: call,
    });
  }

  /** Waits for the reports still on their way (at shutdown). */
  async close(): Promise<void> {
    await this.#sender.close();
  }
}
