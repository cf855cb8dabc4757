// A session's usage (docs/api.md#credits): how long its avatar streamed and how long the visitor
// was in the room with it. The running job reports its whole count as of a time (its `usage`
// report); the latest stands. When that job is done (taken over by another, or the session
// ended) its count is folded into the session's sums, a stretch still going on at its last
// report counted up to then, so a job that dies or leaves without a last word is counted to
// the moment it was last seen, and one that is gone adds nothing after.
import { and, eq, isNull, or, type SQL, sql } from 'drizzle-orm';
import type { UsageReport } from '../contract/index.ts';
import type { Queryable } from '../db/index.ts';
import { sessions } from './schema.ts';

/** Keeps `report` as the running job's usage, unless a later one is kept already; never once the session ended. */
export async function recordUsage(db: Queryable, sessionId: string, report: UsageReport): Promise<void> {
  const { type: _type, ...usage } = report;
  await db
    .update(sessions)
    .set({ usageCurrent: usage })
    .where(
      and(
        eq(sessions.id, sessionId),
        eq(sessions.status, 'running'),
        or(
          isNull(sessions.usageCurrent),
          sql`(${sessions.usageCurrent} ->> 'at')::timestamptz <= ${usage.at}::timestamptz`,
        ),
      ),
    );
}

/** The running job's count, and what went on after its report up to `until` (ms, SQL). */
function folded(field: 'streamed_ms' | 'visitor_ms', flag: 'streaming' | 'visitor_present', until: Date): SQL<number> {
  const current = sessions.usageCurrent;
  const since = sql`greatest(0, floor(extract(epoch from (${until.toISOString()}::timestamptz - (${current} ->> 'at')::timestamptz)) * 1000))`;
  return sql<number>`coalesce((${current} ->> ${field})::bigint + case when (${current} ->> ${flag})::boolean then ${since} else 0 end, 0)`;
}

/** The update that folds the running job's usage into the sums at `until` (spread into a `set`). */
export function foldUsage(until: Date) {
  return {
    streamedMs: sql`(${sessions.streamedMs} + ${folded('streamed_ms', 'streaming', until)})::int`,
    visitorMs: sql`(${sessions.visitorMs} + ${folded('visitor_ms', 'visitor_present', until)})::int`,
    usageCurrent: null,
  };
}

/** A session's usage in whole seconds: the folded sums, and the running job's count so far. */
export function usageSeconds(row: {
  streamedMs: number;
  visitorMs: number;
  usageCurrent: { streamed_ms: number; visitor_ms: number } | null;
}) {
  return {
    streamed_seconds: Math.round((row.streamedMs + (row.usageCurrent?.streamed_ms ?? 0)) / 1000),
    visitor_seconds: Math.round((row.visitorMs + (row.usageCurrent?.visitor_ms ?? 0)) / 1000),
  };
}

/** Seconds from the start call to the end, or to `now` while the session runs. */
export function durationSeconds(row: { createdAt: Date; endedAt: Date | null }, now = new Date()): number {
  return Math.max(0, Math.round(((row.endedAt ?? now).getTime() - row.createdAt.getTime()) / 1000));
}
