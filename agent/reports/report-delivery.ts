// Delivering a job's reports (src/contract/job-reports.ts) to the control plane, and how one
// delivery attempt went. The control plane de-duplicates minutes by (session, index) and
// turns by turn id, so delivering a report twice is harmless: that is what makes retrying safe.
// The meter keeps its reports in order and retries them for as long as the session runs
// (meter.ts); the others are sent as they come, each tried a few times (ReportSender).
import type { JobReport } from '../../src/contract/index.ts';

/**
 * - `accepted`: done.
 * - `retry`: a network error, timeout or server-side failure; the same report may succeed later.
 * - `credits_exhausted`: the control plane answered 402; it ends the session itself.
 * - `refused`: any other answer (bad token, session already ended…); sending it again cannot help.
 */
export type ReportOutcome = 'accepted' | 'retry' | 'credits_exhausted' | 'refused';

/** One delivery attempt of one report. Never throws: failures are outcomes. */
export type Reporter<Report extends JobReport = JobReport> = (report: Report) => Promise<ReportOutcome>;

export interface HttpReporterOptions {
  /** The session's report endpoint (`report_url` of the dispatch metadata). */
  url: string;
  /** Sent as `Authorization: Bearer <token>`; it is valid for this one session only. */
  token: string;
  /** Per attempt; a hung control plane counts as a failed attempt. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/**
 * Posts each report as JSON to the control plane: one reporter for every report of a session
 * (its endpoint takes meter, transcript, quality and fallback reports alike).
 */
export function httpReporter<Report extends JobReport = JobReport>({
  url,
  token,
  timeoutMs = 5_000,
  fetch: send = fetch,
}: HttpReporterOptions): Reporter<Report> {
  return async (report) => {
    let response: Response;
    try {
      response = await send(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(report),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch {
      return 'retry';
    }
    // Drain the body so the connection can be reused.
    await response.arrayBuffer().catch(() => undefined);
    return outcomeOf(response.status);
  };
}

/**
 * Delivers one report, trying again (0.5 s, 1 s, 2 s… apart) while the control plane may take
 * it later. True once accepted.
 */
export async function deliver<Report extends JobReport>(
  reporter: Reporter<Report>,
  report: Report,
  attempts = 4,
): Promise<boolean> {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const outcome = await reporter(report);
    if (outcome === 'accepted') return true;
    if (outcome !== 'retry') return false;
    if (attempt < attempts) await Bun.sleep(250 * 2 ** attempt);
  }
  return false;
}

export function outcomeOf(status: number): ReportOutcome {
  if (status >= 200 && status < 300) return 'accepted';
  if (status === 402) return 'credits_exhausted';
  // 408 and 429 are the client-side statuses that mean "later", not "never".
  if (status >= 500 || status === 408 || status === 429) return 'retry';
  return 'refused';
}

/**
 * Reports sent as they come, side by side, each delivered with a few tries (deliver): the
 * transcript's turns, each turn's quality. `undelivered` hears of a report given up on;
 * close() waits for those still on their way (at shutdown).
 */
export class ReportSender<Report extends JobReport> {
  readonly #reporter: Reporter<Report>;
  readonly #undelivered: (report: Report) => void;
  readonly #pending = new Set<Promise<void>>();

  constructor(reporter: Reporter<Report>, undelivered: (report: Report) => void) {
    this.#reporter = reporter;
    this.#undelivered = undelivered;
  }

  send(report: Report): void {
    const delivery = deliver(this.#reporter, report).then((delivered) => {
      if (!delivered) this.#undelivered(report);
    });
    this.#pending.add(delivery);
    void delivery.finally(() => this.#pending.delete(delivery));
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }
}
