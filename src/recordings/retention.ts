// Which recordings' files are past their retention (docs/api.md#recordings, #recording-storage):
// ready in the service's store, not yet removed, older than their account's `retention_days`, or
// RECORDING_RETENTION_DAYS where it set none; 0 keeps them. Files in an account's own bucket are
// never removed by the service: its bucket, its rules.

import { and, eq, isNull, lt, sql } from 'drizzle-orm';
import { daysAgo } from '../db/clock.ts';
import type { Database } from '../db/index.ts';
import { recordingStorage, recordings } from './schema.ts';

export async function expiredRecordings(db: Database, defaultDays: number, limit: number) {
  const days = sql`coalesce(${recordingStorage.retentionDays}, ${defaultDays})`;
  const rows = await db
    .select({ recording: recordings })
    .from(recordings)
    .leftJoin(recordingStorage, eq(recordingStorage.accountId, recordings.accountId))
    .where(
      and(
        eq(recordings.status, 'ready'),
        eq(recordings.store, 'service'),
        isNull(recordings.deletedAt),
        sql`${days} > 0`,
        lt(recordings.readyAt, daysAgo(days)),
      ),
    )
    .limit(limit);
  return rows.map((row) => row.recording);
}
