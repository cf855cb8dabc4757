// The recordings' sweep (docs/api.md#recordings), run by every API process on its own timer
// (RECORDING_SWEEP_INTERVAL_SECONDS, src/sweeps.ts), with all its state in the database so a
// restart loses nothing:
// - joining: a recording whose session has ended is joined once every part said `done` with all
//   its chunks in, or RECORDING_FINISH_WAIT_SECONDS after the end whatever came (a lost job never
//   says done). The process that takes it holds a lease (`worked_until`, renewed as it works, as
//   identities' creates do); one whose process died is taken again once the lease runs out.
// - storing: in the account's own bucket when it set one (docs/api.md#recording-storage), else in
//   the service's store; a bucket that refuses it fails the recording, never falls back.
// - retention: files in the service's store older than their account's retention days (or
//   RECORDING_RETENTION_DAYS) are removed (retention.ts).
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, asc, eq, or, sql } from 'drizzle-orm';
import type { AssetStore } from '../assets/index.ts';
import type { RecordingSettings } from '../config.ts';
import { secondsAgo } from '../db/clock.ts';
import type { Database, Queryable } from '../db/index.ts';
import { keepRenewing, leaseRanOut, leaseUntil } from '../db/work-lease.ts';
import { log } from '../logging/index.ts';
import { sessions } from '../sessions/schema.ts';
import type { EventData } from '../webhooks/contract.ts';
import { writeEvent } from '../webhooks/index.ts';
import { bucketOf, StorageUnreadable, storageOf } from './account-storage.ts';
import { BucketFailed, type CustomerBucket, customerFileKey, type EndpointRules } from './customer-bucket.ts';
import { JOIN_TIMEOUT_MS, JoinFailed, joinParts } from './media-join.ts';
import { chunkNumberOf, chunksPrefix, partPrefix, recordingFileKey } from './object-keys.ts';
import { secondsOf } from './presenter.ts';
import { removeRecording } from './removal.ts';
import { expiredRecordings } from './retention.ts';
import { recordingParts, recordings } from './schema.ts';

export interface FinisherDeps {
  db: Database;
  store: AssetStore;
  settings: RecordingSettings;
  /** WORK_LEASE_SECONDS: how far ahead a join's lease is kept. */
  workLeaseSeconds: number;
  ffmpegPath: string;
  joinTimeoutMs?: number;
  /** The address rules of accounts' own buckets (the webhooks' ones). */
  bucketRules: EndpointRules;
}

/** What one sweep looks at, at most: the next sweep takes the rest. */
const BATCH = 20;

export const NO_MEDIA_REASON = 'no media was received from the agent';

/** A part's chunk numbers in the store, and how many of them run without a gap from 0. */
async function storedChunks(store: AssetStore, sessionId: string, part: string) {
  const numbered = (await store.list(partPrefix(sessionId, part)))
    .map((key) => ({ key, n: chunkNumberOf(key) }))
    .filter((c): c is { key: string; n: number } => c.n !== undefined)
    .sort((a, b) => a.n - b.n);
  let contiguous = 0;
  while (contiguous < numbered.length && numbered[contiguous]!.n === contiguous) contiguous++;
  return { keys: numbered.map((c) => c.key), contiguous };
}

/** A recording's webhook, in the transaction that settled it; it names the session's identity (null once deleted). */
async function announce<T extends 'recording.ready' | 'recording.failed'>(
  tx: Queryable,
  accountId: string,
  sessionId: string,
  type: T,
  data: Omit<EventData[T], 'session_id' | 'identity_id'>,
): Promise<void> {
  const [session] = await tx
    .select({ identityId: sessions.identityId })
    .from(sessions)
    .where(eq(sessions.id, sessionId));
  const event = { session_id: sessionId, identity_id: session?.identityId ?? null, ...data } as EventData[T];
  await writeEvent(tx, accountId, type, event);
}

export class RecordingFinisher {
  #busy: Promise<void> | undefined;

  constructor(private readonly deps: FinisherDeps) {}

  /** One pass: joins what is due, then removes what retention says. One pass at a time per process. */
  sweep(): Promise<void> {
    this.#busy ??= (async () => {
      try {
        await this.joinDue();
        await this.applyRetention();
      } finally {
        this.#busy = undefined;
      }
    })();
    return this.#busy;
  }

  /** Resolves once a pass under way is over (the service's stop). */
  async idle(): Promise<void> {
    await this.#busy?.catch(() => {});
  }

  /** Recordings of ended sessions that no live process is joining, oldest end first. */
  private async due() {
    const { db, settings } = this.deps;
    const incompleteParts = sql`exists (select 1 from ${recordingParts} p where p.session_id = ${recordings.sessionId} and (p.done_at is null or p.chunks_received < coalesce(p.chunks, 0)))`;
    const anyPart = sql`exists (select 1 from ${recordingParts} p where p.session_id = ${recordings.sessionId})`;
    const waited = sql`${sessions.endedAt} <= ${secondsAgo(settings.finishWaitSeconds)}`;
    return db
      .select({ sessionId: recordings.sessionId, waited: sql<boolean>`${waited}` })
      .from(recordings)
      .innerJoin(sessions, eq(sessions.id, recordings.sessionId))
      .where(
        and(
          eq(sessions.status, 'ended'),
          sql`${sessions.endedAt} is not null`,
          or(
            eq(recordings.status, 'recording'),
            and(eq(recordings.status, 'processing'), leaseRanOut(recordings.workedUntil)),
          ),
          or(waited, eq(recordings.status, 'processing'), and(anyPart, sql`not ${incompleteParts}`)),
        ),
      )
      .orderBy(asc(sessions.endedAt))
      .limit(BATCH);
  }

  /** Takes the recording for this process: true for the one process that got it. */
  private async claim(sessionId: string): Promise<boolean> {
    const [claimed] = await this.deps.db
      .update(recordings)
      .set({ status: 'processing', workedUntil: leaseUntil(this.deps.workLeaseSeconds) })
      .where(
        and(
          eq(recordings.sessionId, sessionId),
          or(
            eq(recordings.status, 'recording'),
            and(eq(recordings.status, 'processing'), leaseRanOut(recordings.workedUntil)),
          ),
        ),
      )
      .returning({ sessionId: recordings.sessionId });
    return Boolean(claimed);
  }

  private async joinDue(): Promise<void> {
    for (const { sessionId, waited } of await this.due()) {
      // Every part said done and counted its chunks; before the wait runs out, a gap in the
      // middle (a chunk still being retried) is waited for too.
      if (!waited && !(await this.allChunksStored(sessionId))) continue;
      if (!(await this.claim(sessionId))) continue;
      await this.join(sessionId).catch((error: unknown) =>
        // Left `processing`: once its lease runs out, a later sweep (of any process) tries again.
        log.error({ err: error, session_id: sessionId }, 'joining a recording failed; it will be tried again'),
      );
    }
  }

  private async allChunksStored(sessionId: string): Promise<boolean> {
    const parts = await this.deps.db.select().from(recordingParts).where(eq(recordingParts.sessionId, sessionId));
    for (const part of parts) {
      const { contiguous } = await storedChunks(this.deps.store, sessionId, part.part);
      if (contiguous < (part.chunks ?? 0)) return false;
    }
    return true;
  }

  /** Keeps the lease ahead while the join runs; returns its stop. */
  private holdLease(sessionId: string): () => void {
    const { db, workLeaseSeconds } = this.deps;
    return keepRenewing(
      workLeaseSeconds,
      () =>
        db
          .update(recordings)
          .set({ workedUntil: leaseUntil(workLeaseSeconds) })
          .where(and(eq(recordings.sessionId, sessionId), eq(recordings.status, 'processing'))),
      { session_id: sessionId, work: 'recording join' },
    );
  }

  /** Each part's chunks, contiguous from 0, written one after another into a file of its own (fragmented MP4 joins byte-wise). */
  private async partFiles(sessionId: string, dir: string): Promise<{ part: string; path: string }[]> {
    const { db, store } = this.deps;
    const parts = await db
      .select()
      .from(recordingParts)
      .where(eq(recordingParts.sessionId, sessionId))
      .orderBy(asc(recordingParts.startedAt), asc(recordingParts.part));
    const files: { part: string; path: string }[] = [];
    for (const [index, part] of parts.entries()) {
      const { keys, contiguous } = await storedChunks(store, sessionId, part.part);
      if (contiguous < keys.length || contiguous < (part.chunks ?? 0)) {
        log.warn(
          {
            session_id: sessionId,
            part: part.part,
            joined_chunks: contiguous,
            stored_chunks: keys.length,
            said_chunks: part.chunks,
          },
          'a recording part has missing chunks: only those before the first gap are joined',
        );
      }
      if (contiguous === 0) continue;
      const path = join(dir, `part-${index}.mp4`);
      const file = await open(path, 'w', 0o600);
      try {
        for (const key of keys.slice(0, contiguous)) {
          const blob = await store.get(key);
          if (!blob) throw new Error(`the chunk ${key} vanished from the store`);
          await file.write(new Uint8Array(await blob.arrayBuffer()));
        }
      } finally {
        await file.close();
      }
      files.push({ part: part.part, path });
    }
    return files;
  }

  private async join(sessionId: string): Promise<void> {
    const { store } = this.deps;
    const stopLease = this.holdLease(sessionId);
    const dir = await mkdtemp(join(tmpdir(), 'likeness-recording-'));
    const started = performance.now();
    try {
      const files = await this.partFiles(sessionId, dir);
      if (files.length === 0) return await this.fail(sessionId, NO_MEDIA_REASON);
      let joined: Awaited<ReturnType<typeof joinParts>>;
      try {
        joined = await joinParts(
          this.deps.ffmpegPath,
          dir,
          files.map((file) => file.path),
          this.deps.joinTimeoutMs ?? JOIN_TIMEOUT_MS,
        );
      } catch (error) {
        if (!(error instanceof JoinFailed)) throw error;
        log.error({ err: error, session_id: sessionId }, 'a recording could not be joined');
        return await this.fail(sessionId, `the recording could not be joined: ${error.message}`);
      }
      const destination = await this.destinationOf(sessionId);
      if (typeof destination === 'string') return await this.fail(sessionId, destination);
      const bucket = destination.bucket;
      const key = bucket ? customerFileKey(bucket.settings.prefix, sessionId) : recordingFileKey(sessionId);
      if (bucket) {
        try {
          await bucket.upload(key, joined.path, this.deps.bucketRules);
        } catch (error) {
          if (!(error instanceof BucketFailed)) throw error;
          return await this.fail(
            sessionId,
            `the recording could not be stored in the bucket ${bucket.settings.bucket} at ${bucket.settings.endpoint}: ${error.message}`,
          );
        }
      } else await store.putFile(key, joined.path, 'video/mp4');
      const where = bucket ? ('customer' as const) : ('service' as const);
      const written = await this.recordReady(sessionId, { files, joined, key, bucket });
      // Its session deleted meanwhile (the row went with it): the file has nobody to belong to.
      if (!written && !(await this.exists(sessionId)))
        await (bucket ? bucket.delete(key, this.deps.bucketRules) : store.delete(key));
      await store.deletePrefix(chunksPrefix(sessionId));
      log.info(
        {
          session_id: sessionId,
          parts: files.length,
          copied: joined.copied,
          duration_ms: joined.durationMs,
          size_bytes: joined.sizeBytes,
          store: where,
          seconds: Math.round(performance.now() - started) / 1000,
        },
        'recording ready',
      );
    } finally {
      stopLease();
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** The account's own bucket (or none: the service's store), read when the file is stored; a reason to fail when it cannot be read. */
  /** The recording is ready where it was stored: its row, each part's length in the file, and recording.ready, at once. False when it was not processing any more. */
  private recordReady(
    sessionId: string,
    {
      files,
      joined,
      key,
      bucket,
    }: {
      files: { part: string; path: string }[];
      joined: Awaited<ReturnType<typeof joinParts>>;
      key: string;
      bucket: CustomerBucket | undefined;
    },
  ): Promise<boolean> {
    const { db } = this.deps;
    const where = bucket ? ('customer' as const) : ('service' as const);
    return db.transaction(async (tx) => {
      const [row] = await tx
        .update(recordings)
        .set({
          status: 'ready',
          reason: null,
          durationMs: joined.durationMs,
          sizeBytes: joined.sizeBytes,
          store: where,
          objectKey: key,
          bucket: bucket?.location ?? null,
          workedUntil: null,
          readyAt: new Date(),
        })
        .where(and(eq(recordings.sessionId, sessionId), eq(recordings.status, 'processing')))
        .returning();
      if (!row) return false;
      // Each part's length in the file: the captions lay the file on the session's clock with them.
      for (const kept of joined.kept) {
        const part = files.find((file) => file.path === kept.path)!.part;
        await tx
          .update(recordingParts)
          .set({ joinedMs: kept.durationMs })
          .where(and(eq(recordingParts.sessionId, sessionId), eq(recordingParts.part, part)));
      }
      await announce(tx, row.accountId, sessionId, 'recording.ready', {
        duration_seconds: secondsOf(joined.durationMs) ?? 0,
        size_bytes: joined.sizeBytes,
        store: where,
        object_key: bucket ? key : null,
      });
      return true;
    });
  }

  private async destinationOf(sessionId: string): Promise<{ bucket: CustomerBucket | undefined } | string> {
    const { db, settings } = this.deps;
    const [row] = await db
      .select({ accountId: recordings.accountId })
      .from(recordings)
      .where(eq(recordings.sessionId, sessionId));
    if (!row) return { bucket: undefined };
    try {
      return { bucket: bucketOf(await storageOf(db, row.accountId), settings.storageKey) };
    } catch (error) {
      if (!(error instanceof StorageUnreadable)) throw error;
      return `the recording could not be stored in the account's bucket: ${error.message}`;
    }
  }

  private async exists(sessionId: string): Promise<boolean> {
    const [row] = await this.deps.db
      .select({ sessionId: recordings.sessionId })
      .from(recordings)
      .where(eq(recordings.sessionId, sessionId));
    return Boolean(row);
  }

  private async fail(sessionId: string, reason: string): Promise<void> {
    const { db, store } = this.deps;
    await db.transaction(async (tx) => {
      const [row] = await tx
        .update(recordings)
        .set({ status: 'failed', reason, workedUntil: null })
        .where(and(eq(recordings.sessionId, sessionId), eq(recordings.status, 'processing')))
        .returning();
      if (!row) return;
      await announce(tx, row.accountId, sessionId, 'recording.failed', { reason });
    });
    await store.deletePrefix(chunksPrefix(sessionId));
    log.warn({ session_id: sessionId, reason }, 'recording failed');
  }

  /** Files in the service's store past their account's retention (or RECORDING_RETENTION_DAYS; 0: kept) are removed; their rows stay. */
  private async applyRetention(): Promise<void> {
    const { db, store, settings } = this.deps;
    for (const row of await expiredRecordings(db, settings.retentionDays, BATCH)) {
      if (await removeRecording(db, store, row))
        log.info({ session_id: row.sessionId, ready_at: row.readyAt }, 'recording removed: past its retention');
    }
  }
}
