// What a session's job writes after the conversation (its summary, src/sessions/summary.ts; its
// outcome, src/outcomes/): each has a status column (`none`, `pending`, `ready`, `failed`) and
// settles the same way. Kept here once (sessions' summary takes it from outcomes' index.ts): while the session runs the newest report stands (the
// ending announces it); once it ended the first report settles it, announced at once; a sweep
// fails what never came.
import { and, eq, inArray, isNotNull, lt, or } from 'drizzle-orm';
import type { Database, Queryable } from '../db/index.ts';
import { sessions } from '../sessions/schema.ts';

type SessionRow = typeof sessions.$inferSelect;
type StatusColumn = typeof sessions.summaryStatus | typeof sessions.outcomeStatus;

/**
 * Stores `values` (the status among them) unless the session ended and this was settled already;
 * `announce` runs in the same transaction when the stored session has ended and `ready` is true.
 * The stored row, or undefined when nothing changed.
 */
export async function storeWritten(
  db: Database,
  sessionId: string,
  status: StatusColumn,
  values: Partial<typeof sessions.$inferInsert>,
  ready: boolean,
  announce: (tx: Queryable, row: SessionRow) => Promise<void>,
): Promise<SessionRow | undefined> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(sessions)
      .set(values)
      .where(and(eq(sessions.id, sessionId), or(eq(sessions.status, 'running'), inArray(status, ['none', 'pending']))))
      .returning();
    if (row?.status === 'ended' && ready) await announce(tx, row);
    return row;
  });
}

/** Fails what is still `pending` on sessions that ended more than `waitSeconds` ago; their ids. */
export async function giveUpPending(
  db: Database,
  status: StatusColumn,
  values: Partial<typeof sessions.$inferInsert>,
  waitSeconds: number,
  now = new Date(),
): Promise<string[]> {
  const cutoff = new Date(now.getTime() - waitSeconds * 1000);
  const failed = await db
    .update(sessions)
    .set(values)
    .where(and(eq(status, 'pending'), isNotNull(sessions.endedAt), lt(sessions.endedAt, cutoff)))
    .returning({ id: sessions.id });
  return failed.map(({ id }) => id);
}
