// The conversation's turns, sent to the control plane as they are committed to the chat
// history (user turns once transcribed, agent turns once spoken or cut off). Each turn
// carries its id, so a report delivered twice is stored once.
import type { TranscriptReport } from '../../src/contract/index.ts';
import { deliver, type Reporter } from '../metering/index.ts';

const ATTEMPTS = 4;

export class TranscriptLog {
  readonly #reporter: Reporter<TranscriptReport>;
  readonly #logger: { warn(message: string): void };
  #pending = new Set<Promise<void>>();

  constructor(reporter: Reporter<TranscriptReport>, logger: { warn(message: string): void }) {
    this.#reporter = reporter;
    this.#logger = logger;
  }

  record(turn: Omit<TranscriptReport, 'type'>): void {
    if (!turn.text.trim()) return;
    const delivery = this.#deliver({ type: 'transcript', ...turn });
    this.#pending.add(delivery);
    void delivery.finally(() => this.#pending.delete(delivery));
  }

  /** Waits for the reports still on their way (at shutdown). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }

  async #deliver(report: TranscriptReport): Promise<void> {
    if (!(await deliver(this.#reporter, report, ATTEMPTS)))
      this.#logger.warn(`a ${report.role} turn of the transcript could not be delivered`);
  }
}
