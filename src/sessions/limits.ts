// A session start against the account's limits (src/limits): sessions running at once and
// starts per minute, counted from the account's session rows. Voice-only sessions count as
// any other: they take an agent worker's slot just the same (decisions.md).
import { and, count, desc, eq, gt } from 'drizzle-orm';
import type { Queryable } from '../db/index.ts';
import { type AccountLimits, limitReached, secondsAgo, windowWait } from '../limits/index.ts';
import { sessions } from './schema.ts';

/** What a 429 for running sessions tells a client to wait: sessions end at their own pace. */
const RUNNING_RETRY_AFTER_SECONDS = 15;

/** Throws 429 when the account may not start another session now. */
export async function checkSessionLimits(q: Queryable, accountId: string, limits: AccountLimits): Promise<void> {
  if (limits.concurrent_sessions > 0) {
    const [row] = await q
      .select({ running: count() })
      .from(sessions)
      .where(and(eq(sessions.accountId, accountId), eq(sessions.status, 'running')));
    if ((row?.running ?? 0) >= limits.concurrent_sessions) {
      throw limitReached(
        `This account has ${limits.concurrent_sessions} sessions running, its limit: end one first`,
        RUNNING_RETRY_AFTER_SECONDS,
      );
    }
  }
  const perMinute = limits.session_starts_per_minute;
  if (perMinute > 0) {
    const recent = await q
      .select({ at: sessions.createdAt })
      .from(sessions)
      .where(and(eq(sessions.accountId, accountId), gt(sessions.createdAt, secondsAgo(60))))
      .orderBy(desc(sessions.createdAt))
      .limit(perMinute);
    const wait = windowWait(
      recent.map((r) => r.at),
      perMinute,
      60,
    );
    if (wait > 0) throw limitReached(`This account started ${perMinute} sessions in the last minute, its limit`, wait);
  }
}
