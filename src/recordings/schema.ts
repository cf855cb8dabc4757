import { index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';
import { RECORDING_STATUSES } from '../contract/recordings.ts';
import { belongsTo, createdAt, instant, updatedAt } from '../db/columns.ts';
import { sessions } from '../sessions/schema.ts';

/** Where a recording's file is: the service's object store, or the account's own bucket. */
export const RECORDING_STORES = ['service', 'customer'] as const;

/**
 * A recorded session's recording (docs/api.md#recordings), made at its start. The row outlives
 * the file: once deleted (by the API or the retention sweep) `deletedAt` says when, and the
 * session and the ledger keep that it existed.
 */
export const recordings = pgTable(
  'recordings',
  {
    sessionId: belongsTo('session_id', () => sessions.id).primaryKey(),
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    status: text('status', { enum: RECORDING_STATUSES }).notNull().default('recording'),
    /** Why it failed (`failed`). */
    reason: text('reason'),
    durationMs: integer('duration_ms'),
    sizeBytes: integer('size_bytes'),
    store: text('store', { enum: RECORDING_STORES }),
    /** The file's key in its store, once ready. */
    objectKey: text('object_key'),
    /** Store `customer`: the bucket it went to (`{endpoint}/{bucket}`), so DELETE removes it there and nowhere else. */
    bucket: text('bucket'),
    /** While the parts are joined, the process doing it keeps this in the future (a lease, as identities' workedUntil). */
    workedUntil: instant('worked_until'),
    createdAt: createdAt(),
    readyAt: instant('ready_at'),
    /** The file was removed (DELETE, or retention); the row stays. */
    deletedAt: instant('deleted_at'),
  },
  (t) => [index('recordings_status_idx').on(t.status), index('recordings_ready_idx').on(t.readyAt)],
);

/** One job's part of a recording: chunks of fragmented MP4 kept in the object store until joined. */
export const recordingParts = pgTable(
  'recording_parts',
  {
    sessionId: belongsTo('session_id', () => recordings.sessionId).notNull(),
    /** The job's id (contract RECORDING_PART_PATTERN). */
    part: text('part').notNull(),
    /** When its recording began, as its job said (else when its first chunk arrived): parts join in this order. */
    startedAt: instant('started_at').notNull().defaultNow(),
    /** The highest chunk number received, +1 (chunks may arrive out of order on retries). */
    chunksReceived: integer('chunks_received').notNull().default(0),
    /** From the job's `done`: how many chunks and how long; null until then (a lost job never says). */
    chunks: integer('chunks'),
    durationMs: integer('duration_ms'),
    doneAt: instant('done_at'),
    /** How long it lasts in the joined file (ffprobe's reading); null until joined, or when left out. */
    joinedMs: integer('joined_ms'),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.part] })],
);

/**
 * An account's recording settings (docs/api.md#recording-storage): its own S3-compatible bucket,
 * where its recordings go instead of the service's store, and its own retention. The secret is
 * kept encrypted (secret-box.ts) and never leaves the service again.
 */
export const recordingStorage = pgTable('recording_storage', {
  accountId: belongsTo('account_id', () => accounts.id).primaryKey(),
  /** The bucket's S3 endpoint (https, or http where the operator allows private addresses); null: the service's store. */
  endpoint: text('endpoint'),
  bucket: text('bucket'),
  region: text('region'),
  /** Put before every key the service writes there (`recordings/`, or empty). */
  prefix: text('prefix').notNull().default(''),
  accessKeyId: text('access_key_id'),
  /** AES-256-GCM under RECORDING_STORAGE_KEY: `v1.{iv}.{tag}.{ciphertext}`, base64url. */
  secretAccessKey: text('secret_access_key'),
  /** Days the service's store keeps this account's recordings (0: kept); null: RECORDING_RETENTION_DAYS. */
  retentionDays: integer('retention_days'),
  updatedAt: updatedAt(),
});
