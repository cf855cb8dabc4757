// /v1/sessions: start (docs/api.md#sessions-start), end (#sessions-end), and reading sessions
// back (#sessions-read, #sessions-transcript).
import { eq } from 'drizzle-orm';
import { t } from 'elysia';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import { ownedRow } from '../db/owned.ts';
import type { AddressesFor } from '../http/client-addresses.ts';
import { ApiError, ErrorResponse, notFound, ValidationErrorResponse } from '../http/errors.ts';
import { listPage } from '../http/paging.ts';
import { log } from '../logging/index.ts';
import {
  EndSessionResponse,
  ListSessionsQuery,
  SessionParams,
  SessionResponse,
  StartSessionBody,
  StartSessionResponse,
  TranscriptResponse,
} from './contract.ts';
import { RoomClosureUnconfirmed, type SessionLifecycle } from './lifecycle.ts';
import { endResponse, sessionListItem, sessionResponse } from './presenter.ts';
import { sessions } from './schema.ts';
import { type StartDeps, startSession } from './start.ts';
import { transcriptOf } from './transcripts.ts';

export interface SessionDeps extends StartDeps {
  lifecycle: SessionLifecycle;
  /** Where a client joins a room (its rtc_url): src/http/client-addresses.ts. */
  addressesFor: AddressesFor;
}

export function sessionRoutes<const Prefix extends string>(deps: SessionDeps, audience: Audience<Prefix>) {
  const { db, lifecycle } = deps;
  const findOwned = async (accountId: string, sessionId: string) => {
    const row = await ownedRow(db, sessions, accountId, sessionId);
    if (!row) throw notFound('Session');
    return row;
  };

  return authenticatedRoutes(db, audience, '/sessions', 'Sessions')
    .post(
      '/start',
      ({ caller, body, request }) =>
        startSession(deps, caller.accountId, body ?? {}, deps.addressesFor(request).rtcUrl),
      {
        body: t.Optional(StartSessionBody),
        parse: 'json',
        response: {
          200: StartSessionResponse,
          401: ErrorResponse,
          402: ErrorResponse,
          404: ErrorResponse,
          409: ErrorResponse,
          422: ValidationErrorResponse,
          429: ErrorResponse,
          500: ErrorResponse,
          503: ErrorResponse,
        },
        detail: {
          operationId: 'startSession',
          summary: 'Start a realtime session: room, agent, avatar, and a token to join',
        },
      },
    )
    .post(
      '/:session_id/end',
      async ({ caller, params }) => {
        const session = await findOwned(caller.accountId, params.session_id);
        try {
          return endResponse(await lifecycle.end(session.id, 'ended_by_api'));
        } catch (error) {
          if (error instanceof RoomClosureUnconfirmed) {
            log.warn(
              { session_id: session.id, err: error },
              'ending a session: the room closure could not be confirmed',
            );
            throw new ApiError(502, 'Room closure could not be confirmed; retry shortly');
          }
          throw error;
        }
      },
      {
        params: SessionParams,
        response: { 200: EndSessionResponse, 401: ErrorResponse, 404: ErrorResponse, 502: ErrorResponse },
        detail: {
          operationId: 'endSession',
          summary: 'End a session: close its room and disconnect everyone, the agent included',
        },
      },
    )
    .get(
      '/:session_id',
      async ({ caller, params }) => sessionResponse(await findOwned(caller.accountId, params.session_id)),
      {
        params: SessionParams,
        response: { 200: SessionResponse, 401: ErrorResponse, 404: ErrorResponse },
        detail: { operationId: 'getSession', summary: 'Read one session: status, end reason, billed minutes' },
      },
    )
    .get(
      '/:session_id/transcript',
      async ({ caller, params }) => transcriptOf(db, (await findOwned(caller.accountId, params.session_id)).id),
      {
        params: SessionParams,
        response: { 200: TranscriptResponse, 401: ErrorResponse, 404: ErrorResponse },
        detail: {
          operationId: 'getSessionTranscript',
          summary: "Read a session's transcript: the visitor's and the agent's turns, with language and times",
        },
      },
    )
    .get(
      '',
      async ({ caller, query, set }) => {
        const { rows } = await listPage(
          db,
          sessions,
          {
            scope: eq(sessions.accountId, caller.accountId),
            filter: query.status ? eq(sessions.status, query.status) : undefined,
            limit: query.limit ?? 100,
            after: query.after,
            unknownAfter: 'after must be the session_id of a session in the list',
          },
          { set, path: `${audience.prefix}/sessions`, query: { status: query.status } },
        );
        return rows.map(sessionListItem);
      },
      {
        query: ListSessionsQuery,
        response: { 200: t.Array(SessionResponse), 401: ErrorResponse, 422: ValidationErrorResponse },
        detail: { operationId: 'listSessions', summary: "List the caller's sessions, newest first" },
      },
    );
}
