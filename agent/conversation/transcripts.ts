// The conversation's turns, sent to the control plane as they are committed to the chat
// history (user turns once transcribed, agent turns once spoken or cut off). Each turn
// carries its id, so a report delivered twice is stored once.
import type { TranscriptReport } from '../../src/contract/index.ts';
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

  /** Waits for the reports still on their way (at shutdown). */
  async close(): Promise<void> {
    await this.#sender.close();
  }
}
