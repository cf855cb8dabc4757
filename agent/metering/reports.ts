// What a job tells the control plane about its session, and how one delivery attempt went.
// The control plane de-duplicates minutes by (session, index), so delivering a report
// twice is harmless: that is what makes retrying safe.

export type MeterReport =
  /** The avatar's first video frame was published: billing time starts here. */
  | { type: 'avatar_streaming'; at: string }
  /** Minute `index` (0-based, counted from the first frame) is to be charged. */
  | { type: 'minute'; index: number }
  | { type: 'visitor_left' }
  /** The job is in the room: the session has its agent. */
  | { type: 'agent_joined' };

/**
 * - `accepted`: done.
 * - `retry`: a network error, timeout or server-side failure; the same report may succeed later.
 * - `credits_exhausted`: the control plane answered 402; it ends the session itself.
 * - `refused`: any other answer (bad token, session already ended…); sending it again cannot help.
 */
export type ReportOutcome = 'accepted' | 'retry' | 'credits_exhausted' | 'refused';

/** One delivery attempt of one report. Never throws: failures are outcomes. */
export type Reporter<Report = MeterReport> = (report: Report) => Promise<ReportOutcome>;

export interface HttpReporterOptions {
  /** The session's report endpoint (`report_url` of the dispatch metadata). */
  url: string;
  /** Sent as `Authorization: Bearer <token>`; it is valid for this one session only. */
  token: string;
  /** Per attempt; a hung control plane counts as a failed attempt. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Posts each report as JSON to the control plane (the session's report endpoint takes meter and transcript reports alike). */
export function httpReporter<Report = MeterReport>({ url, token, timeoutMs = 5_000, fetch: send = fetch }: HttpReporterOptions): Reporter<Report> {
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

export function outcomeOf(status: number): ReportOutcome {
  if (status >= 200 && status < 300) return 'accepted';
  if (status === 402) return 'credits_exhausted';
  // 408 and 429 are the client-side statuses that mean "later", not "never".
  if (status >= 500 || status === 408 || status === 429) return 'retry';
  return 'refused';
}
