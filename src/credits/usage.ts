// An account's usage over a range, in UTC buckets (docs/api.md#usage): sessions started from
// the sessions table; minutes, identities and credits from the ledger, which records each
// exactly once. Every bucket of the range is returned, empty ones too, so a chart needs no gaps filled.
import { and, count, eq, gte, lt, sql } from 'drizzle-orm';
import type { Database } from '../db/index.ts';
import { invalid } from '../http/errors.ts';
import { sessions } from '../sessions/schema.ts';
import type { USAGE_GRANULARITIES } from './contract.ts';
import { creditLedger } from './schema.ts';

export type Granularity = (typeof USAGE_GRANULARITIES)[number];

const BUCKET_MS: Record<Granularity, number> = { day: 86_400_000, hour: 3_600_000 };
/** A year of days, a month of hours: enough for any chart, bounded for the database. */
const MAX_BUCKETS: Record<Granularity, number> = { day: 366, hour: 744 };
const DEFAULT_DAYS = 30;

export interface UsageRange {
  from: Date;
  to: Date;
  granularity: Granularity;
}

function parseInstant(value: string, field: 'from' | 'to'): Date {
  // Date-only and offset-less date-times are UTC; Date would read the latter as local time.
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : /T[\d:.]+$/.test(value) ? `${value}Z` : value;
  const at = /^\d{4}-\d{2}-\d{2}/.test(iso) ? new Date(iso) : new Date(NaN);
  if (Number.isNaN(at.getTime()))
    throw invalid(
      ['query', field],
      `${field} must be an ISO 8601 date (2026-11-01) or date-time (2026-11-01T12:00:00Z)`,
      'invalid_datetime',
    );
  return at;
}

/** The range a query asks for, `from` moved back to its bucket's start; 422 for what cannot be answered. */
export function usageRange(
  query: { from?: string; to?: string; granularity?: Granularity },
  now = new Date(),
): UsageRange {
  const granularity = query.granularity ?? 'day';
  const step = BUCKET_MS[granularity];
  const to = query.to ? parseInstant(query.to, 'to') : now;
  const asked = query.from ? parseInstant(query.from, 'from') : new Date(to.getTime() - DEFAULT_DAYS * BUCKET_MS.day);
  const from = new Date(Math.floor(asked.getTime() / step) * step);
  if (to.getTime() <= asked.getTime()) throw invalid(['query', 'to'], 'to must be after from', 'range_empty');
  if (Math.ceil((to.getTime() - from.getTime()) / step) > MAX_BUCKETS[granularity]) {
    throw invalid(
      ['query', 'from'],
      `At most ${MAX_BUCKETS[granularity]} buckets of one ${granularity}: narrow the range or choose a larger granularity`,
      'range_too_long',
    );
  }
  return { from, to, granularity };
}

export interface UsageCounts {
  sessions: number;
  avatar_minutes: number;
  visitor_seconds: number;
  streamed_seconds: number;
  identities: number;
  credits_spent: { onboarding: number; session_minute: number; recorded_minute: number };
  credits_granted: number;
}

/** A bucket with nothing in it. */
export const emptyUsage = (): UsageCounts => ({
  sessions: 0,
  avatar_minutes: 0,
  visitor_seconds: 0,
  streamed_seconds: 0,
  identities: 0,
  credits_spent: { onboarding: 0, session_minute: 0, recorded_minute: 0 },
  credits_granted: 0,
});

export async function accountUsage(db: Database, accountId: string, { from, to, granularity }: UsageRange) {
  const step = BUCKET_MS[granularity];
  const bucketOf = (column: typeof sessions.createdAt | typeof creditLedger.createdAt) =>
    sql<number>`extract(epoch from date_trunc(${granularity}, ${column}, 'UTC'))::float8`;
  // A session's usage: its folded sums, and its running job's count so far (src/sessions/usage-reports.ts).
  // Each session rounded to the second, as its own read shows it, then summed: the totals are the sessions' sum.
  const usageSeconds = (
    field: 'streamed_ms' | 'visitor_ms',
    column: typeof sessions.streamedMs | typeof sessions.visitorMs,
  ) =>
    sql<number>`coalesce(sum(round((${column} + coalesce((${sessions.usageCurrent} ->> ${field})::bigint, 0)) / 1000.0)), 0)::float8`;
  const started = await db
    .select({
      bucket: bucketOf(sessions.createdAt),
      n: count(),
      streamedSeconds: usageSeconds('streamed_ms', sessions.streamedMs),
      visitorSeconds: usageSeconds('visitor_ms', sessions.visitorMs),
    })
    .from(sessions)
    .where(and(eq(sessions.accountId, accountId), gte(sessions.createdAt, from), lt(sessions.createdAt, to)))
    .groupBy(sql`1`);
  const ledger = await db
    .select({
      bucket: bucketOf(creditLedger.createdAt),
      kind: creditLedger.kind,
      n: count(),
      amount: sql<number>`sum(${creditLedger.amount})::float8`,
    })
    .from(creditLedger)
    .where(
      and(eq(creditLedger.accountId, accountId), gte(creditLedger.createdAt, from), lt(creditLedger.createdAt, to)),
    )
    .groupBy(sql`1`, creditLedger.kind);

  const buckets = new Map<number, UsageCounts>();
  for (let at = from.getTime(); at < to.getTime(); at += step) buckets.set(at, emptyUsage());
  const at = (bucket: number) => buckets.get(Number(bucket) * 1000) ?? emptyUsage();
  for (const row of started) {
    const counts = at(row.bucket);
    counts.sessions += Number(row.n);
    counts.streamed_seconds += Number(row.streamedSeconds);
    counts.visitor_seconds += Number(row.visitorSeconds);
  }
  for (const row of ledger) countLedgerRow(at(row.bucket), row);
  const totals = emptyUsage();
  for (const counts of buckets.values()) addUsage(totals, counts);
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    granularity,
    buckets: [...buckets].map(([start, counts]) => ({ start: new Date(start).toISOString(), ...counts })),
    totals,
  };
}

/** What a bucket's ledger rows of one kind spent or granted. Holds and their release cancel out: nothing was spent. */
function countLedgerRow(counts: UsageCounts, row: { kind: string; n: number; amount: number }): void {
  const amount = Number(row.amount);
  if (row.kind === 'session_minute') {
    counts.avatar_minutes += Number(row.n);
    counts.credits_spent.session_minute -= amount;
  } else if (row.kind === 'recorded_minute') {
    counts.credits_spent.recorded_minute -= amount;
  } else if (row.kind === 'onboarding') {
    counts.identities += Number(row.n);
    counts.credits_spent.onboarding -= amount;
  } else if (row.kind === 'grant' || row.kind === 'adjustment') {
    counts.credits_granted += amount;
  }
}

function addUsage(totals: UsageCounts, counts: UsageCounts): void {
  totals.sessions += counts.sessions;
  totals.avatar_minutes += counts.avatar_minutes;
  totals.visitor_seconds += counts.visitor_seconds;
  totals.streamed_seconds += counts.streamed_seconds;
  totals.identities += counts.identities;
  totals.credits_spent.onboarding += counts.credits_spent.onboarding;
  totals.credits_spent.session_minute += counts.credits_spent.session_minute;
  totals.credits_spent.recorded_minute += counts.credits_spent.recorded_minute;
  totals.credits_granted += counts.credits_granted;
}
