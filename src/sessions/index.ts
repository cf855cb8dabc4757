// /v1/sessions: start (docs/api.md#sessions-start), end (#sessions-end), and reading sessions
// back (#sessions-read, #sessions-transcript).
import { and, desc, eq, lt, or } from 'drizzle-orm';
import { t } from 'elysia';
import { type Audience, authenticatedRoutes, PUBLIC_API } from '../auth/index.ts';
import type { AddressesFor } from '../http/client-addresses.ts';
import { ApiError, ErrorResponse, invalid, notFound, ValidationErrorResponse } from '../http/errors.ts';
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
import { endResponse, sessionResponse } from './presenter.ts';
import { sessions } from './schema.ts';
import { type StartDeps, startSession } from './start.ts';
import { transcriptOf } from './transcripts.ts';

export interface SessionDeps extends StartDeps {
  lifecycle: SessionLifecycle;
  /** Where a client joins a room (its rtc_url): src/http/client-addresses.ts. */
  addressesFor: AddressesFor;
}

export function sessionRoutes(deps: SessionDeps, audience: Audience = PUBLIC_API) {
  const { db, lifecycle } = deps;
  const findOwned = async (accountId: string, sessionId: string) => {
    const [row] = await db
      .select()
      .from(sessions)
      .where(and(eq(sessions.id, sessionId), eq(sessions.accountId, accountId)));
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
      async ({ caller, query }) => {
        const conditions = [eq(sessions.accountId, caller.accountId)];
        if (query.status) conditions.push(eq(sessions.status, query.status));
        if (query.after) {
          const [cursor] = await db
            .select()
            .from(sessions)
            .where(and(eq(sessions.id, query.after), eq(sessions.accountId, caller.accountId)));
          if (!cursor)
            throw invalid(
              ['query', 'after'],
              'after must be the session_id of a session in the list',
              'unknown_cursor',
            );
          conditions.push(
            or(
              lt(sessions.createdAt, cursor.createdAt),
              and(eq(sessions.createdAt, cursor.createdAt), lt(sessions.id, cursor.id)),
            )!,
          );
        }
        const rows = await db
          .select()
          .from(sessions)
          .where(and(...conditions))
          .orderBy(desc(sessions.createdAt), desc(sessions.id))
          .limit(query.limit ?? 100);
        return rows.map(sessionResponse);
      },
      {
        query: ListSessionsQuery,
        response: { 200: t.Array(SessionResponse), 401: ErrorResponse, 422: ValidationErrorResponse },
        detail: { operationId: 'listSessions', summary: "List the caller's sessions, newest first" },
      },
    );
}
