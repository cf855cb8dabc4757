// A session's recording (docs/api.md#recordings) and captions (#captions): reading and deleting
// it at /v1/sessions/{id}/recording, its captions at /v1/sessions/{id}/captions.vtt; the job's
// chunks and parts (intake.ts); the sweep that joins and expires them (finisher.ts).
import { eq } from 'drizzle-orm';
import { t } from 'elysia';
import type { AssetStore } from '../assets/index.ts';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import type { RecordingSettings } from '../config.ts';
import type { Database } from '../db/index.ts';
import { findOwned } from '../db/owned.ts';
import type { UrlsFor } from '../http/client-urls.ts';
import { ApiError, errorResponses } from '../http/errors.ts';
import { sessions } from '../sessions/schema.ts';
import { bucketOf, StorageUnreadable, storageOf } from './account-storage.ts';
import { captionsOf } from './captions.ts';
import { CaptionsResponse, RecordingParams, RecordingResponse } from './contract.ts';
import { BucketFailed, type EndpointRules } from './customer-bucket.ts';
import { recordingResponse } from './presenter.ts';
import { removeRecording } from './removal.ts';
import { recordings } from './schema.ts';

export { RECORDING_EXAMPLES } from './examples.ts';
export { NO_MEDIA_REASON, RecordingFinisher } from './finisher.ts';
export { recordingIntakeRoutes } from './intake.ts';
export { recordingStorageRoutes } from './storage-routes.ts';

export interface RecordingRouteDeps {
  db: Database;
  store: AssetStore;
  urlsFor: UrlsFor;
  settings: RecordingSettings;
  /** The address rules of accounts' own buckets (the webhooks' ones). */
  bucketRules: EndpointRules;
}

const NOT_RECORDED = 'This session was not recorded';

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route table: Elysia infers each route's types along one chain, so a feature's routes stay one expression
export function recordingRoutes<const Prefix extends string>(deps: RecordingRouteDeps, audience: Audience<Prefix>) {
  const { db, store } = deps;
  const ownedSession = (accountId: string, sessionId: string) =>
    findOwned(db, sessions, accountId, sessionId, 'Session');
  const ownedRecording = async (accountId: string, sessionId: string) => {
    const session = await ownedSession(accountId, sessionId);
    const [row] = await db.select().from(recordings).where(eq(recordings.sessionId, session.id));
    if (!row) throw new ApiError(404, NOT_RECORDED);
    return row;
  };

  /** A file in the account's own bucket is removed there, with the settings saved for that very bucket. */
  const customerBucketOf = async (row: typeof recordings.$inferSelect) => {
    if (row.store !== 'customer' || row.deletedAt !== null) return undefined;
    let bucket: ReturnType<typeof bucketOf>;
    try {
      bucket = bucketOf(await storageOf(db, row.accountId), deps.settings.storageKey);
    } catch (error) {
      if (error instanceof StorageUnreadable) throw new ApiError(409, `The file cannot be deleted: ${error.message}`);
      throw error;
    }
    if (!bucket || bucket.location !== row.bucket)
      throw new ApiError(
        409,
        `The file is in the bucket ${row.bucket}, which is no longer this account's recording storage: delete ${row.objectKey} there`,
      );
    return { bucket, rules: deps.bucketRules };
  };

  return authenticatedRoutes(db, audience, '/sessions', 'Recordings')
    .get(
      '/:session_id/recording',
      async ({ caller, params, request }) =>
        recordingResponse(await ownedRecording(caller.accountId, params.session_id), deps.urlsFor(request).links),
      {
        params: RecordingParams,
        response: { 200: RecordingResponse, ...errorResponses(401, 404) },
        detail: {
          operationId: 'getSessionRecording',
          summary: "Read a session's recording: its status, length, size and a download link that expires",
        },
      },
    )
    .delete(
      '/:session_id/recording',
      async ({ caller, params, set }) => {
        const row = await ownedRecording(caller.accountId, params.session_id);
        if (row.status === 'recording' || row.status === 'processing')
          throw new ApiError(409, `The recording is ${row.status}: delete it once it is ready or failed`);
        try {
          await removeRecording(db, store, row, await customerBucketOf(row));
        } catch (error) {
          if (error instanceof BucketFailed)
            throw new ApiError(502, `Deleting ${row.objectKey} from the bucket ${row.bucket} failed: ${error.message}`);
          throw error;
        }
        set.status = 204;
      },
      {
        params: RecordingParams,
        response: { 204: t.Void(), ...errorResponses(401, 404, 409, 502) },
        detail: {
          operationId: 'deleteSessionRecording',
          summary: "Delete a session's recording file; the recording stays listed with deleted_at",
          description:
            "A file in the account's own bucket is deleted there, with the account's saved settings: 409 when they no longer name that bucket, 502 when the bucket refuses.",
        },
      },
    )
    .get(
      '/:session_id/captions.vtt',
      async ({ caller, params }) => {
        const session = await ownedSession(caller.accountId, params.session_id);
        return new Response(await captionsOf(db, session), {
          headers: { 'content-type': 'text/vtt; charset=utf-8', 'cache-control': 'private, no-store' },
        });
      },
      {
        params: RecordingParams,
        response: { 200: CaptionsResponse, ...errorResponses(401, 404) },
        detail: {
          operationId: 'getSessionCaptions',
          summary: "A session's conversation as WebVTT captions, timed from the start of its video",
        },
      },
    );
}
