// /v1/sessions: start (docs/api.md#sessions-start), end (#sessions-end), and reading sessions
// back (#sessions-read, #sessions-transcript).
import { eq } from 'drizzle-orm';
import { t } from 'elysia';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import type { UrlsFor } from '../http/client-urls.ts';
import { ApiError, errorResponses } from '../http/errors.ts';
import { ownedItem } from '../http/owned-item.ts';
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

export { SessionParams } from './contract.ts';
export { startSession } from './start.ts';

export interface SessionDeps extends StartDeps {
  lifecycle: SessionLifecycle;
  /** Where a client joins a room (its rtc_url): src/http/client-urls.ts. */
  urlsFor: UrlsFor;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route table: Elysia infers each route's types along one chain, so a feature's routes stay one expression
export function sessionRoutes<const Prefix extends string>(deps: SessionDeps, audience: Audience<Prefix>) {
  const { db, lifecycle } = deps;
  const session = ownedItem(db, sessions, 'session_id', 'Session', sessionResponse);
  const ownSession = session.find;

  return authenticatedRoutes(db, audience, '/sessions', 'Sessions')
    .post(
      '/start',
      ({ caller, body, request }) => startSession(deps, caller.accountId, body ?? {}, deps.urlsFor(request).rtcUrl),
      {
        body: t.Optional(StartSessionBody),
        parse: 'json',
        response: {
          200: StartSessionResponse,
          ...errorResponses(401, 402, 404, 409, 422, 429, 500, 503),
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
        const session = await ownSession(caller.accountId, params.session_id);
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
        response: { 200: EndSessionResponse, ...errorResponses(401, 404, 502) },
        detail: {
          operationId: 'endSession',
          summary: 'End a session: close its room and disconnect everyone, the agent included',
        },
      },
    )
    .get('/:session_id', session.read, {
      params: SessionParams,
      response: { 200: SessionResponse, ...errorResponses(401, 404) },
      detail: { operationId: 'getSession', summary: 'Read one session: status, end reason, billed minutes' },
    })
    .get(
      '/:session_id/transcript',
      async ({ caller, params }) => transcriptOf(db, (await ownSession(caller.accountId, params.session_id)).id),
      {
        params: SessionParams,
        response: { 200: TranscriptResponse, ...errorResponses(401, 404) },
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
        response: { 200: t.Array(SessionResponse), ...errorResponses(401, 422) },
        detail: { operationId: 'listSessions', summary: "List the caller's sessions, newest first" },
      },
    );
}
