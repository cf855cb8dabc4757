// Visitors and their memory (docs/api.md#visitors): /v1/visitors to read, correct and forget what
// is remembered of a person, and /v1/visitor-tokens for a backend to let its page name its
// visitor on an embed (tokens.ts). Scoped to the caller's account: another account's visitor is
// not found. The start's side is src/sessions/start.ts; the writing, memory.ts.
import { and, eq, inArray } from 'drizzle-orm';
import { Elysia, t } from 'elysia';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import { MEMORY_MAX_FACTS } from '../contract/index.ts';
import type { Database } from '../db/index.ts';
import { isOwned } from '../db/owned.ts';
import { ApiError, errorResponses, type FieldProblem, notFound } from '../http/errors.ts';
import { ownedItem } from '../http/owned-item.ts';
import { ownedList } from '../http/paging.ts';
import { identities } from '../identities/schema.ts';
import {
  CreateVisitorTokenRequest,
  ListVisitorsQuery,
  UpdateVisitorRequest,
  VISITOR_TOKEN_TTL,
  VisitorParams,
  VisitorResponse,
  VisitorTokenResponse,
} from './contract.ts';
import { forgetVisitor, replacedFacts } from './memory.ts';
import { visitors } from './schema.ts';
import type { VisitorTokens } from './tokens.ts';

export { SessionVisitorFields, SessionVisitorResponseFields } from './contract.ts';
export { VISITOR_EXAMPLES } from './examples.ts';
export { forgetStaleVisitors, recordMemory, sessionMemory, visitorStarted } from './memory.ts';
export { type VisitorClaim, VisitorTokens } from './tokens.ts';

type VisitorRow = typeof visitors.$inferSelect;

export function presentVisitor(row: VisitorRow) {
  return {
    visitor_id: row.id,
    facts: row.facts,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    last_session_at: row.lastSessionAt?.toISOString() ?? null,
  };
}

export interface VisitorDeps {
  db: Database;
  tokens: VisitorTokens;
}

const errors = errorResponses(401, 403, 404, 422);

/** PATCH's facts as scopes: a problem per unknown identity and per scope over MEMORY_MAX_FACTS. */
async function factProblems(
  db: Database,
  accountId: string,
  facts: { text: string; identity_id?: string | null }[],
): Promise<FieldProblem[]> {
  const named = [...new Set(facts.flatMap((fact) => (fact.identity_id ? [fact.identity_id] : [])))];
  const found = named.length
    ? await db
        .select({ id: identities.id })
        .from(identities)
        .where(and(eq(identities.accountId, accountId), inArray(identities.id, named)))
    : [];
  const known = new Set(found.map((row) => row.id));
  const problems: FieldProblem[] = [];
  const counts = new Map<string | null, number>();
  facts.forEach((fact, index) => {
    const scope = fact.identity_id ?? null;
    if (scope !== null && !known.has(scope))
      problems.push({
        loc: ['body', 'facts', index, 'identity_id'],
        msg: `No identity ${scope.slice(0, 100)} in this account`,
        type: 'unknown_identity',
      });
    counts.set(scope, (counts.get(scope) ?? 0) + 1);
    if (counts.get(scope) === MEMORY_MAX_FACTS + 1)
      problems.push({
        loc: ['body', 'facts', index],
        msg: `At most ${MEMORY_MAX_FACTS} facts per identity and for the account`,
        type: 'too_many_facts',
      });
  });
  return problems;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route table: Elysia infers each route's types along one chain, so a feature's routes stay one expression
export function visitorRoutes<const Prefix extends string>(deps: VisitorDeps, audience: Audience<Prefix>) {
  const { db } = deps;
  const visitor = ownedItem(db, visitors, 'visitor_id', 'Visitor', presentVisitor);
  const ownVisitor = visitor.find;

  const remembered = authenticatedRoutes(db, audience, '/visitors', 'Visitors')
    .get(
      '',
      ownedList(db, visitors, presentVisitor, {
        path: `${audience.prefix}/visitors`,
        unknownAfter: 'after must be the visitor_id of a visitor in the list',
        defaultLimit: 100,
      }),
      {
        query: ListVisitorsQuery,
        response: {
          200: t.Array(VisitorResponse),
          ...errorResponses(401, 403, 422),
        },
        detail: {
          operationId: 'listVisitors',
          summary: "List the account's visitors and what is remembered, newest first",
        },
      },
    )
    .get('/:visitor_id', visitor.read, {
      params: VisitorParams,
      response: { 200: VisitorResponse, ...errorResponses(401, 403, 404) },
      detail: {
        operationId: 'getVisitor',
        summary: 'What is remembered of a visitor: each fact, when and in which session it was learned',
      },
    })
    .patch(
      '/:visitor_id',
      async ({ caller, params, body }) => {
        const row = await ownVisitor(caller.accountId, params.visitor_id);
        const problems = await factProblems(db, caller.accountId, body.facts);
        if (problems.length > 0) throw new ApiError(422, problems);
        const now = new Date();
        // Scope by scope: the facts of a scope the body leaves out are forgotten too.
        const scopes = new Set([
          ...row.facts.map((f) => f.identity_id),
          ...body.facts.map((f) => f.identity_id ?? null),
        ]);
        let facts = row.facts;
        for (const scope of scopes) {
          const texts = body.facts.filter((f) => (f.identity_id ?? null) === scope).map((f) => f.text);
          facts = replacedFacts(facts, scope, texts, null, now);
        }
        const [updated] = await db
          .update(visitors)
          .set({ facts, updatedAt: now })
          .where(isOwned(visitors, caller.accountId, row.id))
          .returning();
        return presentVisitor(updated!);
      },
      {
        params: VisitorParams,
        body: UpdateVisitorRequest,
        parse: 'json',
        response: { 200: VisitorResponse, ...errors },
        detail: {
          operationId: 'updateVisitor',
          summary: 'Correct what is remembered of a visitor: the list replaces every fact; the next session reads it',
        },
      },
    )
    .delete(
      '/:visitor_id',
      async ({ caller, params, set }) => {
        if (!(await forgetVisitor(db, caller.accountId, params.visitor_id))) throw notFound('Visitor');
        set.status = 204;
      },
      {
        params: VisitorParams,
        response: { 204: t.Void(), ...errorResponses(401, 403, 404) },
        detail: {
          operationId: 'forgetVisitor',
          summary:
            'Forget a visitor entirely (right to erasure): every fact, and the link from their sessions; a session of theirs still running adds nothing',
        },
      },
    );

  const tokens = authenticatedRoutes(db, audience, '/visitor-tokens', 'Visitors').post(
    '',
    async ({ caller, body, set }) => {
      const memoryScope = body.memory_scope ?? 'identity';
      const { token, expiresAt } = await deps.tokens.issue(
        { accountId: caller.accountId, visitorId: body.visitor_id, memoryScope },
        body.ttl_seconds ?? VISITOR_TOKEN_TTL.default,
      );
      set.status = 201;
      return {
        visitor_token: token,
        visitor_id: body.visitor_id,
        memory_scope: memoryScope,
        expires_at: expiresAt.toISOString(),
      };
    },
    {
      body: CreateVisitorTokenRequest,
      parse: 'json',
      response: { 201: VisitorTokenResponse, ...errorResponses(401, 403, 422) },
      detail: {
        operationId: 'createVisitorToken',
        summary: 'Let a web page name its visitor: a short-lived token for one visitor_id, for the embed',
        description:
          'From your backend, for the visitor signed in to your page: pass the token to `<likeness-avatar visitor-token="…">`. An embed session started with it has that visitor and their memory; the token does nothing else (it reads nothing, and works only with this account\'s publishable keys).',
      },
    },
  );

  return new Elysia().use(remembered).use(tokens);
}
