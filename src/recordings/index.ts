// A session's recording (docs/api.md#recordings) and captions (#captions): reading and deleting
// it at /v1/sessions/{id}/recording, its captions at /v1/sessions/{id}/captions.vtt; the job's
// chunks and parts (intake.ts); the sweep that joins and expires them (finisher.ts).
import { eq } from 'drizzle-orm';
import { t } from 'elysia';
import type { AssetStore } from '../assets/store.ts';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import type { Database } from '../db/index.ts';
import { ownedRow } from '../db/owned.ts';
import type { AddressesFor } from '../http/client-addresses.ts';
import { ApiError, ErrorResponse, notFound } from '../http/errors.ts';
import { sessions } from '../sessions/schema.ts';
import { captionsOf } from './captions.ts';
import { CaptionsResponse, RecordingParams, RecordingResponse } from './contract.ts';
import { recordingResponse } from './presenter.ts';
import { removeRecording } from './removal.ts';
import { recordings } from './schema.ts';

export { NO_MEDIA_REASON, RecordingFinisher } from './finisher.ts';
export { recordingIntakeRoutes } from './intake.ts';

export interface RecordingRouteDeps {
  db: Database;
  store: AssetStore;
  addressesFor: AddressesFor;
}

const NOT_RECORDED = 'This session was not recorded';

export function recordingRoutes<const Prefix extends string>(deps: RecordingRouteDeps, audience: Audience<Prefix>) {
  const { db, store } = deps;
  const ownedSession = async (accountId: string, sessionId: string) => {
    const session = await ownedRow(db, sessions, accountId, sessionId);
    if (!session) throw notFound('Session');
    return session;
  };
  const ownedRecording = async (accountId: string, sessionId: string) => {
    const session = await ownedSession(accountId, sessionId);
    const [row] = await db.select().from(recordings).where(eq(recordings.sessionId, session.id));
    if (!row) throw new ApiError(404, NOT_RECORDED);
    return row;
  };

  return authenticatedRoutes(db, audience, '/sessions', 'Recordings')
    .get(
      '/:session_id/recording',
      async ({ caller, params, request }) =>
        recordingResponse(await ownedRecording(caller.accountId, params.session_id), deps.addressesFor(request).links),
      {
        params: RecordingParams,
        response: { 200: RecordingResponse, 401: ErrorResponse, 404: ErrorResponse },
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
        await removeRecording(db, store, row);
        set.status = 204;
      },
      {
        params: RecordingParams,
        response: { 204: t.Void(), 401: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse },
        detail: {
          operationId: 'deleteSessionRecording',
          summary: "Delete a session's recording file; the recording stays listed with deleted_at",
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
        response: { 200: CaptionsResponse, 401: ErrorResponse, 404: ErrorResponse },
        detail: {
          operationId: 'getSessionCaptions',
          summary: "A session's conversation as WebVTT captions, timed from the start of its video",
        },
      },
    );
}
