// Publishable keys (docs/api.md#publishable-keys): /v1/publishable-keys for secret keys and, as
// twins, the console. A key made with a test key belongs to the test account, like everything
// a test key makes. The start a website makes with one is src/embed/.
import { and, eq, inArray, isNull } from 'drizzle-orm';
import { t } from 'elysia';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import { newId } from '../db/ids.ts';
import type { Database, Queryable } from '../db/index.ts';
import { isOwned } from '../db/owned.ts';
import { ApiError, errorResponses, type FieldProblem, notFound } from '../http/errors.ts';
import { ownedItem } from '../http/owned-item.ts';
import { listPage } from '../http/paging.ts';
import { sentFields } from '../http/sent-fields.ts';
import { identities } from '../identities/schema.ts';
import {
  CreatePublishableKeyRequest,
  DEFAULT_PUBLISHABLE_KEY_LIMITS,
  PublishableKeyParams,
  PublishableKeyResponse,
  UpdatePublishableKeyRequest,
} from './contract.ts';
import { exactOrigin, newPublishableKey, type PublishableKeyRow } from './keys.ts';
import { publishableKeys } from './schema.ts';

export { EmbedStartRequest, EmbedStartResponse } from './contract.ts';
export { PUBLISHABLE_KEY_EXAMPLES } from './examples.ts';
export { exactOrigin, findPublishableKey, type PublishableKeyRow } from './keys.ts';

export function presentPublishableKey(row: PublishableKeyRow) {
  return {
    publishable_key_id: row.id,
    publishable_key: row.key,
    name: row.name,
    allowed_origins: row.allowedOrigins,
    identity_ids: row.identityIds,
    limits: row.limits,
    record_sessions: row.recordSessions,
    test: row.key.startsWith('lk_pub_test_'),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

/** The origins as browsers send them, or a problem per entry that is not exactly one origin. */
function checkedOrigins(texts: string[], problems: FieldProblem[]): string[] {
  const origins: string[] = [];
  texts.forEach((text, index) => {
    const origin = exactOrigin(text);
    if (!origin) {
      problems.push({
        loc: ['body', 'allowed_origins', index],
        msg: `"${text.slice(0, 100)}" is not an origin: scheme, host and optional port, no path (e.g. https://shop.example)`,
        type: 'origin_invalid',
      });
    } else if (!origins.includes(origin)) origins.push(origin);
  });
  return origins;
}

/** A problem per listed id that is not one of the account's identities, or is listed twice. */
async function identityProblems(q: Queryable, accountId: string, ids: string[]): Promise<FieldProblem[]> {
  const found = await q
    .select({ id: identities.id })
    .from(identities)
    .where(and(eq(identities.accountId, accountId), inArray(identities.id, ids)));
  const known = new Set(found.map((row) => row.id));
  const problems: FieldProblem[] = [];
  ids.forEach((id, index) => {
    const loc = ['body', 'identity_ids', index];
    if (ids.indexOf(id) !== index)
      problems.push({ loc, msg: `${id.slice(0, 100)} is listed twice`, type: 'duplicate' });
    else if (!known.has(id))
      problems.push({ loc, msg: `No identity ${id.slice(0, 100)} in this account`, type: 'unknown_identity' });
  });
  return problems;
}

const errors = errorResponses(401, 403, 404, 422);

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route table: Elysia infers each route's types along one chain, so a feature's routes stay one expression
export function publishableKeyRoutes<const Prefix extends string>(db: Database, audience: Audience<Prefix>) {
  const publishableKey = ownedItem(db, publishableKeys, 'publishable_key_id', 'Publishable key', presentPublishableKey);
  const own = publishableKey.find;
  const checked = async (
    accountId: string,
    body: { allowed_origins?: string[]; identity_ids?: string[] },
  ): Promise<{ origins?: string[] }> => {
    const problems: FieldProblem[] = [];
    const origins = body.allowed_origins && checkedOrigins(body.allowed_origins, problems);
    if (body.identity_ids) problems.push(...(await identityProblems(db, accountId, body.identity_ids)));
    if (problems.length > 0) throw new ApiError(422, problems);
    return { origins };
  };

  return authenticatedRoutes(db, audience, '/publishable-keys', 'Publishable keys')
    .post(
      '',
      async ({ caller, body, set }) => {
        const { origins } = await checked(caller.accountId, body);
        const [row] = await db
          .insert(publishableKeys)
          .values({
            id: newId('pbk'),
            accountId: caller.accountId,
            name: body.name ?? null,
            key: newPublishableKey(caller.accountId),
            allowedOrigins: origins!,
            identityIds: body.identity_ids,
            limits: { ...DEFAULT_PUBLISHABLE_KEY_LIMITS, ...body.limits },
            recordSessions: body.record_sessions ?? null,
          })
          .returning();
        set.status = 201;
        return presentPublishableKey(row!);
      },
      {
        body: CreatePublishableKeyRequest,
        parse: 'json',
        response: { 201: PublishableKeyResponse, ...errors },
        detail: {
          operationId: 'createPublishableKey',
          summary: 'Make a key a website may publish: it starts sessions of some identities, from some origins',
          description:
            'The key starts sessions only at POST /v1/embed/sessions, from pages of `allowed_origins`, of `identity_ids`, within its `limits`; it reads nothing. Its sessions are charged to this account and carry `publishable_key_id`.',
        },
      },
    )
    .get(
      '',
      async ({ caller, set }) => {
        const { rows } = await listPage(
          db,
          publishableKeys,
          {
            scope: eq(publishableKeys.accountId, caller.accountId),
            limit: undefined,
            after: undefined,
            unknownAfter: 'after must be the publishable_key_id of a key in the list',
          },
          { set, path: `${audience.prefix}/publishable-keys` },
        );
        return rows.map(presentPublishableKey);
      },
      {
        response: { 200: t.Array(PublishableKeyResponse), ...errorResponses(401, 403) },
        detail: { operationId: 'listPublishableKeys', summary: "List the caller's publishable keys, newest first" },
      },
    )
    .get('/:publishable_key_id', publishableKey.read, {
      params: PublishableKeyParams,
      response: { 200: PublishableKeyResponse, ...errorResponses(401, 403, 404) },
      detail: { operationId: 'getPublishableKey', summary: 'Read one publishable key' },
    })
    .patch(
      '/:publishable_key_id',
      async ({ caller, params, body }) => {
        const key = await own(caller.accountId, params.publishable_key_id);
        const { origins } = await checked(caller.accountId, body);
        const [row] = await db
          .update(publishableKeys)
          .set({
            ...sentFields(body, { name: 'name', record_sessions: 'recordSessions' }),
            ...(origins && { allowedOrigins: origins }),
            ...(body.identity_ids && { identityIds: body.identity_ids }),
            ...(body.limits && { limits: { ...key.limits, ...body.limits } }),
          })
          .where(isOwned(publishableKeys, caller.accountId, key.id))
          .returning();
        return presentPublishableKey(row!);
      },
      {
        params: PublishableKeyParams,
        body: UpdatePublishableKeyRequest,
        parse: 'json',
        response: { 200: PublishableKeyResponse, ...errors },
        detail: {
          operationId: 'updatePublishableKey',
          summary: "Change a publishable key's name, origins, identities or limits; the next start uses them",
        },
      },
    )
    .delete(
      '/:publishable_key_id',
      async ({ caller, params, set }) => {
        const revoked = await db
          .update(publishableKeys)
          .set({ revokedAt: new Date() })
          .where(
            isOwned(publishableKeys, caller.accountId, params.publishable_key_id, isNull(publishableKeys.revokedAt)),
          )
          .returning({ id: publishableKeys.id });
        if (revoked.length === 0) throw notFound('Live publishable key');
        set.status = 204;
      },
      {
        params: PublishableKeyParams,
        response: { 204: t.Void(), ...errorResponses(401, 403, 404) },
        detail: {
          operationId: 'revokePublishableKey',
          summary: 'Revoke a publishable key: its next start is refused; sessions it started run on',
        },
      },
    );
}
