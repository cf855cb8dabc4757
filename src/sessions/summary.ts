// A session's summary (docs/api.md#sessions-summary): the agent job writes it with the session's
// language model once the session ended and reports it (src/contract/job-reports.ts
// SummaryReport); here it is stored, announced with the `session.summary_ready` webhook, and
// given up on when it does not come. The ending itself never waits for it.
import { and, desc, eq, isNotNull } from 'drizzle-orm';
import type { SummaryReport } from '../contract/index.ts';
import type { Database, Queryable } from '../db/index.ts';
import { giveUpPending, pendingAtEnd, storeWritten, type WrittenAfterEnd } from '../outcomes/index.ts';
import { writeEvent } from '../webhooks/index.ts';
import { sessions, sessionTranscripts } from './schema.ts';

type SessionRow = typeof sessions.$inferSelect;

/** A summary not reported this long after the end is given up on (the job died, or was stopped first). */
export const SUMMARY_WAIT_SECONDS = 180;

export const SUMMARY_GIVEN_UP_DETAIL = 'the agent ended before writing it';

const SUMMARY: WrittenAfterEnd = {
  noun: 'summary',
  status: sessions.summaryStatus,
  failed: (detail) => ({ summaryStatus: 'failed', summaryDetail: detail }),
  waitSeconds: SUMMARY_WAIT_SECONDS,
  givenUpDetail: SUMMARY_GIVEN_UP_DETAIL,
  announce,
};

/**
 * Spread into the ending's `set`: a session that had a visitor turn waits for its summary
 * (`pending`); one whose summary came already (the job wrote it as the room closed, before the
 * ending was recorded) keeps it.
 */
export function summaryAtEnd() {
  return {
    summaryStatus: pendingAtEnd(sessions.summaryStatus),
  };
}

/**
 * In the ending's transaction, after `session.ended`: a summary that arrived before the ending
 * was recorded is announced now, so the customer hears of the end first.
 */
export async function announceSummaryAtEnd(tx: Queryable, ended: SessionRow): Promise<void> {
  if (ended.summaryStatus === 'ready' && ended.summary) await announce(tx, ended);
}

/**
 * Stores the job's summary report. While the session runs (its job wrote it as its room closed,
 * before the ending was recorded; or a job that lost its room while the session went on) the
 * newest report stands, and the ending announces it; once the session ended, the first report
 * settles it and is announced at once (a report delivered twice changes nothing).
 */
export async function recordSummary(db: Database, session: SessionRow, report: SummaryReport): Promise<void> {
  const ready = report.text !== null;
  const values = {
    summary: report.text,
    summaryStatus: ready ? ('ready' as const) : ('failed' as const),
    summaryDetail: ready ? null : (report.detail ?? 'the language model wrote no summary'),
  };
  await storeWritten(db, SUMMARY, session.id, values, { ready, detail: values.summaryDetail });
}

/** Pending summaries of sessions that ended more than SUMMARY_WAIT_SECONDS ago fail (a sweep). */
export function giveUpOnSummaries(db: Database, now = new Date()): Promise<number> {
  return giveUpPending(db, SUMMARY, now);
}

async function announce(tx: Queryable, session: SessionRow): Promise<void> {
  await writeEvent(tx, session.accountId, 'session.summary_ready', {
    session_id: session.id,
    identity_id: session.identityId,
    summary: session.summary!,
    language: await summaryLanguage(tx, session),
  });
}

/** The session's language; in auto mode the one the agent spoke last (English before any turn). */
async function summaryLanguage(q: Queryable, session: SessionRow): Promise<string> {
  if (session.language !== 'auto') return session.language;
  const [last] = await q
    .select({ language: sessionTranscripts.language })
    .from(sessionTranscripts)
    .where(and(eq(sessionTranscripts.sessionId, session.id), isNotNull(sessionTranscripts.language)))
    .orderBy(desc(sessionTranscripts.startedAt), desc(sessionTranscripts.seq))
    .limit(1);
  return last?.language ?? 'en';
}
