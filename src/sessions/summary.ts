// A session's summary (docs/api.md#sessions-summary): the agent job writes it with the session's
// language model once the session ended and reports it (src/contract/job-reports.ts
// SummaryReport); here it is stored, announced with the `session.summary_ready` webhook, and
// given up on when it does not come. The ending itself never waits for it.
import { and, desc, eq, isNotNull, sql } from 'drizzle-orm';
import type { SummaryReport } from '../contract/index.ts';
import type { Database, Queryable } from '../db/index.ts';
import { log } from '../logging/index.ts';
import { giveUpPending, storeWritten } from '../outcomes/index.ts';
import { writeEvent } from '../webhooks/index.ts';
import { sessions, sessionTranscripts } from './schema.ts';

type SessionRow = typeof sessions.$inferSelect;

/** A summary not reported this long after the end is given up on (the job died, or was stopped first). */
export const SUMMARY_WAIT_SECONDS = 180;

export const SUMMARY_GIVEN_UP_DETAIL = 'the agent ended before writing it';

/**
 * Spread into the ending's `set`: a session that had a visitor turn waits for its summary
 * (`pending`); one whose summary came already (the job wrote it as the room closed, before the
 * ending was recorded) keeps it.
 */
export function summaryAtEnd() {
  return {
    summaryStatus: sql<SessionRow['summaryStatus']>`case when ${sessions.summaryStatus} = 'none' and exists (
      select 1 from ${sessionTranscripts}
      where ${sessionTranscripts.sessionId} = ${sessions.id} and ${sessionTranscripts.role} = 'user'
    ) then 'pending' else ${sessions.summaryStatus} end`,
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
  const settled = await storeWritten(db, session.id, sessions.summaryStatus, values, ready, announce);
  if (settled && !ready)
    log.warn({ session_id: session.id, detail: values.summaryDetail }, 'the session has no summary');
}

/** Pending summaries of sessions that ended more than SUMMARY_WAIT_SECONDS ago fail (a sweep). */
export async function giveUpOnSummaries(db: Database, now = new Date()): Promise<number> {
  const failed = await giveUpPending(
    db,
    sessions.summaryStatus,
    { summaryStatus: 'failed', summaryDetail: SUMMARY_GIVEN_UP_DETAIL },
    SUMMARY_WAIT_SECONDS,
    now,
  );
  for (const id of failed) log.warn({ session_id: id, detail: SUMMARY_GIVEN_UP_DETAIL }, 'the session has no summary');
  return failed.length;
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
