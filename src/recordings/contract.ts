// The HTTP contract of a session's recording and captions (docs/api.md#recordings): one schema
// per request and response, validated at the edge and shown in /openapi.json; and the params
// of the job's chunk and part routes (src/contract/recordings.ts has what the agent shares).
import { t } from 'elysia';
import { Timestamp } from '../contract/index.ts';
import { RECORDING_MAX_CHUNKS, RECORDING_PART_PATTERN, RECORDING_STATUSES } from '../contract/recordings.ts';
import { oneOf } from '../http/enum-schema.ts';
import { RECORDING_STORES } from './schema.ts';

export const RecordingParams = t.Object({ session_id: t.String() });

const Part = t.String({
  pattern: RECORDING_PART_PATTERN,
  error: 'part: 1–64 letters, digits and _ (the job id)',
});

export const RecordingPartParams = t.Object({ session_id: t.String(), part: Part });

export const RecordingChunkParams = t.Object({
  session_id: t.String(),
  part: Part,
  // Digits only (no sign, no exponent); the upper bound is checked with the number.
  chunk: t.String({
    pattern: `^\\d{1,${String(RECORDING_MAX_CHUNKS - 1).length}}$`,
    error: `chunk: a whole number from 0 to ${RECORDING_MAX_CHUNKS - 1}`,
  }),
});

export const RecordingResponse = t.Object(
  {
    session_id: t.String(),
    status: oneOf(
      RECORDING_STATUSES,
      '`recording` while the session runs (and briefly after, for its last chunks), `processing` while its parts are joined, `ready` to fetch, `failed` (see `reason`).',
    ),
    reason: t.Nullable(t.String({ description: 'Why it failed (`failed`); null otherwise.' })),
    duration_seconds: t.Nullable(t.Number({ description: "The file's length, once ready." })),
    size_bytes: t.Nullable(t.Integer({ description: "The file's size, once ready." })),
    store: t.Nullable(
      oneOf(
        RECORDING_STORES,
        "Where the file is: `service` (fetch it at `download_url`) or `customer` (the account's own bucket, at `object_key`); null until ready.",
      ),
    ),
    download_url: t.Nullable(
      t.String({
        description:
          'A link to the MP4 that expires (ASSET_URL_TTL, at least an hour): read the recording again for a fresh one. Only when ready in the service store, and not deleted. Serves byte ranges (a <video> can seek).',
      }),
    ),
    object_key: t.Nullable(t.String({ description: "The file's key in the account's own bucket (store `customer`)." })),
    created_at: Timestamp,
    ready_at: t.Nullable(Timestamp),
    deleted_at: t.Nullable(
      t.String({
        format: 'date-time',
        description: 'When the file was removed (DELETE, or the retention); the recording is still listed.',
      }),
    ),
  },
  { description: "A session's recording." },
);

export const CaptionsResponse = t.String({
  contentMediaType: 'text/vtt',
  description: 'WebVTT: one cue per turn of the conversation, `<v Visitor>` or `<v Agent>`.',
});

const RetentionDays = t.Nullable(
  t.Integer({
    minimum: 0,
    maximum: 36_500,
    description:
      "Days the service's store keeps this account's recordings after they are ready (0: kept); null or absent: the service's default (RECORDING_RETENTION_DAYS). Files in the account's own bucket are never removed by the service.",
  }),
);

/** PUT /v1/recording-storage: the whole resource each time (PUT replaces it). */
export const RecordingStorageRequest = t.Object(
  {
    endpoint: t.Optional(
      t.String({
        format: 'uri',
        maxLength: 2048,
        description:
          "The bucket's S3-compatible endpoint: https (http only where the operator allows private addresses). Its host must resolve to public addresses unless the operator set WEBHOOKS_ALLOW_PRIVATE.",
      }),
    ),
    bucket: t.Optional(
      t.String({
        pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{1,254}$',
        error: 'bucket: a bucket name (letters, digits, . _ -, 2–255)',
      }),
    ),
    region: t.Optional(t.Nullable(t.String({ minLength: 1, maxLength: 64 }))),
    prefix: t.Optional(
      t.String({
        maxLength: 512,
        pattern: '^$|^[A-Za-z0-9!_.*()-][A-Za-z0-9!_.*()/-]*$',
        error: "prefix: letters, digits and !_.*()/- (no leading '/', no '.' or '..' segment), at most 512",
        description:
          'Put before every key written in the bucket (e.g. `recordings/`); a recording is `{prefix}{session_id}.mp4`.',
      }),
    ),
    access_key_id: t.Optional(t.String({ minLength: 1, maxLength: 256 })),
    secret_access_key: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 256,
        description:
          'Write-only: kept encrypted, never returned. Required with the other bucket fields (PUT replaces the whole resource).',
      }),
    ),
    retention_days: t.Optional(RetentionDays),
  },
  {
    description:
      "An account's recording settings. Give `endpoint`, `bucket`, `access_key_id` and `secret_access_key` together for the account's own bucket (checked by writing and deleting a test object before it is saved), or none of them for the service's store; `retention_days` either way.",
  },
);

export const RecordingStorageResponse = t.Object(
  {
    store: oneOf(
      RECORDING_STORES,
      "Where new recordings go: `customer` (the bucket below) or `service` (the service's store).",
    ),
    endpoint: t.Nullable(t.String()),
    bucket: t.Nullable(t.String()),
    region: t.Nullable(t.String()),
    prefix: t.String(),
    access_key_id: t.Nullable(t.String()),
    secret_set: t.Boolean({ description: 'A secret is saved (it is never returned).' }),
    retention_days: RetentionDays,
    updated_at: Timestamp,
  },
  { description: "An account's recording settings, without the secret." },
);
