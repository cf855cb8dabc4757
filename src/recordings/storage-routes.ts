// /v1/recording-storage (docs/api.md#recording-storage): an account's recording settings, its own
// bucket and its retention, for API keys and, as twins, the console. A bucket is saved only once
// a test object was written under its prefix and deleted (customer-bucket.ts); its secret is
// sealed (secret-box.ts) and never answered.
import { eq } from 'drizzle-orm';
import { t } from 'elysia';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import type { RecordingSettings } from '../config.ts';
import type { Database } from '../db/index.ts';
import { ApiError, errorResponses, invalid } from '../http/errors.ts';
import { log } from '../logging/index.ts';
import { type StorageRow, storageOf } from './account-storage.ts';
import { RecordingStorageRequest, RecordingStorageResponse } from './contract.ts';
import { BucketFailed, CustomerBucket, type EndpointRules } from './customer-bucket.ts';
import { recordingStorage } from './schema.ts';
import { seal } from './secret-box.ts';

export interface StorageRouteDeps {
  db: Database;
  settings: RecordingSettings;
  rules: EndpointRules;
}

const BUCKET_FIELDS = ['endpoint', 'bucket', 'access_key_id', 'secret_access_key'] as const;

export const NO_STORAGE_KEY =
  "This service cannot keep a bucket's secret: its operator must set RECORDING_STORAGE_KEY (32 bytes, base64 or hex) first";

export function presentStorage(row: StorageRow) {
  return {
    store: row.bucket ? ('customer' as const) : ('service' as const),
    endpoint: row.endpoint,
    bucket: row.bucket,
    region: row.region,
    prefix: row.prefix,
    access_key_id: row.accessKeyId,
    secret_set: row.secretAccessKey !== null,
    retention_days: row.retentionDays,
    updated_at: row.updatedAt.toISOString(),
  };
}

/** What the check found, for the customer: the step, and what the bucket's server said. */
function checkFailed(error: BucketFailed, bucket: string): ApiError {
  const what = {
    endpoint: 'the endpoint is not allowed',
    write: `writing a test object to the bucket ${bucket} failed`,
    delete: `deleting the test object from the bucket ${bucket} failed`,
    upload: `writing to the bucket ${bucket} failed`,
  }[error.step];
  return invalid(
    ['body', error.step === 'endpoint' ? 'endpoint' : 'bucket'],
    `${what}: ${error.message}`,
    `storage_check_failed`,
  );
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route table: Elysia infers each route's types along one chain, so a feature's routes stay one expression
export function recordingStorageRoutes<const Prefix extends string>(
  deps: StorageRouteDeps,
  audience: Audience<Prefix>,
) {
  const { db, settings } = deps;
  return authenticatedRoutes(db, audience, '/recording-storage', 'Recordings')
    .put(
      '',
      async ({ caller, body }) => {
        const given = BUCKET_FIELDS.filter((field) => body[field] !== undefined);
        if (given.length > 0 && given.length < BUCKET_FIELDS.length) {
          const missing = BUCKET_FIELDS.filter((field) => body[field] === undefined);
          throw invalid(
            ['body', missing[0]!],
            `${missing.join(', ')}: required with ${given.join(', ')} (give all four for your own bucket, or none for the service's store)`,
            'missing',
          );
        }
        const prefix = body.prefix ?? '';
        if (prefix.split('/').some((segment) => segment === '.' || segment === '..'))
          throw invalid(['body', 'prefix'], "prefix: no '.' or '..' segment", 'value_error');
        let sealed: string | null = null;
        if (given.length > 0) {
          if (!settings.storageKey) throw new ApiError(503, NO_STORAGE_KEY);
          const bucket = new CustomerBucket({
            endpoint: body.endpoint!,
            bucket: body.bucket!,
            region: body.region ?? null,
            prefix,
            accessKeyId: body.access_key_id!,
            secretAccessKey: body.secret_access_key!,
          });
          try {
            await bucket.check(deps.rules);
          } catch (error) {
            if (!(error instanceof BucketFailed)) throw error;
            log.info(
              { account_id: caller.accountId, step: error.step, bucket: body.bucket },
              'a recording bucket failed its check',
            );
            throw checkFailed(error, body.bucket!);
          }
          sealed = seal(settings.storageKey, caller.accountId, body.secret_access_key!);
        }
        const values = {
          endpoint: body.endpoint ?? null,
          bucket: body.bucket ?? null,
          region: given.length > 0 ? (body.region ?? null) : null,
          prefix: given.length > 0 ? prefix : '',
          accessKeyId: body.access_key_id ?? null,
          secretAccessKey: sealed,
          retentionDays: body.retention_days ?? null,
          updatedAt: new Date(),
        };
        const [row] = await db
          .insert(recordingStorage)
          .values({ accountId: caller.accountId, ...values })
          .onConflictDoUpdate({ target: recordingStorage.accountId, set: values })
          .returning();
        return presentStorage(row!);
      },
      {
        body: RecordingStorageRequest,
        parse: 'json',
        response: {
          200: RecordingStorageResponse,
          ...errorResponses(401, 422, 503),
        },
        detail: {
          operationId: 'putRecordingStorage',
          summary:
            "Set the account's recording settings: its own S3-compatible bucket (checked before it is saved) and its retention",
          description:
            "The bucket is checked by writing a small object under the prefix and deleting it; a failure answers 422 with the step and the bucket server's error, and nothing is saved. The secret is kept encrypted and never returned. Recordings joined from then on go to `{prefix}{session_id}.mp4` in the bucket.",
        },
      },
    )
    .get(
      '',
      async ({ caller }) => {
        const row = await storageOf(db, caller.accountId);
        if (!row) throw new ApiError(404, 'No recording storage is set: recordings go to the service store');
        return presentStorage(row);
      },
      {
        response: { 200: RecordingStorageResponse, ...errorResponses(401, 404) },
        detail: { operationId: 'getRecordingStorage', summary: "The account's recording settings, without the secret" },
      },
    )
    .delete(
      '',
      async ({ caller, set }) => {
        await db.delete(recordingStorage).where(eq(recordingStorage.accountId, caller.accountId));
        set.status = 204;
      },
      {
        response: { 204: t.Void(), ...errorResponses(401) },
        detail: {
          operationId: 'deleteRecordingStorage',
          summary:
            "Forget the account's recording settings: new recordings go to the service's store, with its retention",
        },
      },
    );
}
