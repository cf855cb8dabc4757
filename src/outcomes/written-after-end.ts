// What a session's job writes after the conversation (its summary, src/sessions/summary.ts; its
// outcome, src/outcomes/): each has a status column (`none`, `pending`, `ready`, `failed`) and
// settles the same way. Kept here once (sessions' summary takes it from outcomes' index.ts): while the session runs the newest report stands (the
// ending announces it); once it ended the first report settles it, announced at once; a sweep
// fails what never came.
import { and, eq, inArray, isNotNull, lt, or, type SQL, sql } from 'drizzle-orm';
import type { Database, Queryable } from '../db/index.ts';
import { log } from '../logging/index.ts';
import { sessions, sessionTranscripts } from '../sessions/schema.ts';

type SessionRow = typeof sessions.$inferSelect;
type StatusColumn = typeof sessions.summaryStatus | typeof sessions.outcomeStatus;
type SessionValues = Partial<typeof sessions.$inferInsert>;

/** One thing written after the end (the summary, the outcome): where it is kept and how it is announced. */
export interface WrittenAfterEnd {
  /** What the log calls it: "the session has no summary". */
  noun: 'summary' | 'outcome';
  status: StatusColumn;
  /** The values of its failure, with this detail. */
  failed: (detail: string) => SessionValues;
  /** What is still pending this long after the end fails with `givenUpDetail` (the job died, or was stopped first). */
  waitSeconds: number;
  givenUpDetail: string;
  announce: (tx: Queryable, row: SessionRow) => Promise<void>;
}

/**
 * The status at the ending: `pending` when nothing came yet, the visitor had a turn (and `asked`
 * holds, when given); otherwise as it is.
 */
export function pendingAtEnd(status: StatusColumn, asked?: SQL) {
  return sql<SessionRow['summaryStatus']>`case when ${status} = 'none'${asked ? sql` and ${asked}` : sql``} and exists (
      select 1 from ${sessionTranscripts}
      where ${sessionTranscripts.sessionId} = ${sessions.id} and ${sessionTranscripts.role} = 'user'
    ) then 'pending' else ${status} end`;
}

/**
 * Stores `values` (the status among them) unless the session ended and this was settled already;
 * announced in the same transaction when the stored session has ended and `ready` is true; a
 * failure (`ready` false, its `detail`) that settled is logged.
 */
export async function storeWritten(
  db: Database,
  written: WrittenAfterEnd,
  sessionId: string,
  values: SessionValues,
  { ready, detail }: { ready: boolean; detail: string | null },
): Promise<void> {
  const settled = await db.transaction(async (tx) => {
    const [row] = await tx
      .update(sessions)
      .set(values)
      .where(
        and(
          eq(sessions.id, sessionId),
          or(eq(sessions.status, 'running'), inArray(written.status, ['none', 'pending'])),
        ),
      )
      .returning();
    if (row?.status === 'ended' && ready) await written.announce(tx, row);
    return row;
  });
  if (settled && !ready) log.warn({ session_id: sessionId, detail }, `the session has no ${written.noun}`);
}

/** Fails what is still `pending` on sessions that ended more than its `waitSeconds` ago (a sweep); how many. */
export async function giveUpPending(db: Database, written: WrittenAfterEnd, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - written.waitSeconds * 1000);
  const failed = await db
    .update(sessions)
    .set(written.failed(written.givenUpDetail))
    .where(and(eq(written.status, 'pending'), isNotNull(sessions.endedAt), lt(sessions.endedAt, cutoff)))
    .returning({ id: sessions.id });
  for (const { id } of failed)
    log.warn({ session_id: id, detail: written.givenUpDetail }, `the session has no ${written.noun}`);
  return failed.length;
}
