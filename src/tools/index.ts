// Tools (docs/api.md#tools): /v1/tools for API keys and, as twins, the console; and the
// internal route a session's job asks to call a webhook tool through (tool-calls.ts: the job
// holds no secret). A tool's parameters are a safe subset of JSON Schema (parameters.ts); a
// webhook tool's URL follows customer webhooks' address rules (src/webhooks/destinations.ts).
import { and, count, eq } from 'drizzle-orm';
import { t } from 'elysia';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import { TOOL_TIMEOUT_DEFAULT_MS, type ToolType } from '../contract/agent-tools.ts';
import { newId } from '../db/ids.ts';
import { isOwned } from '../db/owned.ts';
import { ApiError, errorResponses, type FieldProblem, notFound } from '../http/errors.ts';
import { ownedItem } from '../http/owned-item.ts';
import { ownedList } from '../http/paging.ts';
import { sentFields } from '../http/sent-fields.ts';
import { checkDestination, DestinationRefused, systemResolver } from '../webhooks/index.ts';
import {
  CreatedToolResponse,
  CreateToolRequest,
  ListToolsQuery,
  ToolParams,
  ToolResponse,
  UpdateToolRequest,
} from './contract.ts';
import type { ToolRouteDeps } from './deps.ts';
import { EMPTY_PARAMETERS, parametersProblems } from './parameters.ts';
import { presentTool } from './presenter.ts';
import { tools } from './schema.ts';

export type { ToolRouteDeps } from './deps.ts';
export { TOOL_EXAMPLES } from './examples.ts';
export { parametersProblems } from './parameters.ts';
export { toolCallRoutes } from './tool-calls.ts';

/** What an end_session tool tells the model when its creator says nothing. */
export const END_SESSION_DESCRIPTION = 'End the conversation when the visitor says goodbye or asks to stop';

/** `tool_` + 22 base62 characters, like the other ids (src/db/ids.ts). */
/** `whsec_` + base64 of 32 random bytes: Standard Webhooks' secret format, as customer webhooks'. */
const newSecret = () => `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;

const duplicateName = (name: string) => new ApiError(409, `A tool named ${name} already exists in this account`);

/** Postgres's unique violation, however the driver (postgres.js, PGlite) or drizzle wraps it. */
const isUniqueViolation = (error: unknown) =>
  (error as { code?: string }).code === '23505' || (error as { cause?: { code?: string } }).cause?.code === '23505';

const errors = errorResponses(401, 404, 409, 422);

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route table: Elysia infers each route's types along one chain, so a feature's routes stay one expression
export function toolRoutes<const Prefix extends string>(deps: ToolRouteDeps, audience: Audience<Prefix>) {
  const { db, settings } = deps;
  const urlProblems = async (url: string): Promise<FieldProblem[]> => {
    try {
      await checkDestination(url, {
        allowPrivate: deps.webhooks.allowPrivate,
        resolve: deps.resolve ?? systemResolver,
      });
      return [];
    } catch (error) {
      if (error instanceof DestinationRefused)
        return [{ loc: ['body', 'url'], msg: `url: ${error.message}`, type: 'url_not_allowed' }];
      throw error;
    }
  };
  /** What a tool of `type` needs beside the schema: a description, a URL for webhooks only, sound parameters. */
  const fieldProblems = async (
    type: ToolType,
    body: { description?: string; url?: string; parameters?: Record<string, unknown> },
    creating: boolean,
  ): Promise<FieldProblem[]> => {
    const problems: FieldProblem[] = [];
    if (type !== 'end_session') {
      if (body.description === undefined && creating)
        problems.push({ loc: ['body', 'description'], msg: `A ${type} tool needs a description`, type: 'missing' });
      else if (body.description !== undefined && body.description.trim() === '')
        problems.push({ loc: ['body', 'description'], msg: 'description is blank', type: 'string_blank' });
    }
    if (type === 'webhook') {
      if (body.url === undefined && creating)
        problems.push({ loc: ['body', 'url'], msg: 'A webhook tool needs a url', type: 'missing' });
      else if (body.url !== undefined) problems.push(...(await urlProblems(body.url)));
    } else if (body.url !== undefined) {
      problems.push({ loc: ['body', 'url'], msg: 'Only webhook tools have a url', type: 'unsupported_field' });
    }
    if (body.parameters !== undefined) problems.push(...parametersProblems(body.parameters, ['body', 'parameters']));
    return problems;
  };
  const tooMany = () =>
    new ApiError(422, [
      {
        loc: ['body'],
        msg: `An account can have at most ${settings.maxPerAccount} tools; delete one first`,
        type: 'too_many_tools',
      },
    ]);
  /** A name the account already uses, but `keep`'s: refused before any costlier check (the insert checks again). */
  const refuseTakenName = async (accountId: string, name: string, keep?: string) => {
    const [taken] = await db
      .select({ id: tools.id })
      .from(tools)
      .where(and(eq(tools.accountId, accountId), eq(tools.name, name)));
    if (taken && taken.id !== keep) throw duplicateName(name);
  };
  const tool = ownedItem(db, tools, 'tool_id', 'Tool', presentTool);
  const own = tool.find;

  return authenticatedRoutes(db, audience, '/tools', 'Tools')
    .post(
      '',
      async ({ caller, body, set }) => {
        // The cap and the name first: a refused tool costs no DNS lookup and no schema compile.
        const [{ existing }] = (await db
          .select({ existing: count() })
          .from(tools)
          .where(eq(tools.accountId, caller.accountId))) as [{ existing: number }];
        if (existing >= settings.maxPerAccount) throw tooMany();
        await refuseTakenName(caller.accountId, body.name);
        const problems = await fieldProblems(body.type, body, true);
        if (problems.length > 0) throw new ApiError(422, problems);
        const row = await db.transaction(async (tx) => {
          const [{ existing }] = (await tx
            .select({ existing: count() })
            .from(tools)
            .where(eq(tools.accountId, caller.accountId))) as [{ existing: number }];
          if (existing >= settings.maxPerAccount) throw tooMany();
          const [created] = await tx
            .insert(tools)
            .values({
              id: newId('tool'),
              accountId: caller.accountId,
              name: body.name,
              description: body.description ?? END_SESSION_DESCRIPTION,
              type: body.type,
              parameters: body.parameters ?? EMPTY_PARAMETERS,
              url: body.type === 'webhook' ? body.url! : null,
              timeoutMs: body.timeout_ms ?? TOOL_TIMEOUT_DEFAULT_MS,
              secret: body.type === 'webhook' ? newSecret() : null,
            })
            .onConflictDoNothing({ target: [tools.accountId, tools.name] })
            .returning();
          if (!created) throw duplicateName(body.name);
          return created;
        });
        set.status = 201;
        return { ...presentTool(row), ...(row.secret ? { secret: row.secret } : {}) };
      },
      {
        body: CreateToolRequest,
        parse: 'json',
        response: { 201: CreatedToolResponse, ...errors },
        detail: {
          operationId: 'createTool',
          summary: "Add a tool; a webhook tool's signing secret is in this answer only",
          description:
            'A webhook tool is called with a POST of JSON `{session_id, identity_id, call_id, tool, arguments}` signed the Standard Webhooks way (`webhook-id`, `webhook-timestamp`, `webhook-signature`); its answer (at most 64 KB) is what the model reads.',
        },
      },
    )
    .get(
      '',
      ownedList(db, tools, presentTool, {
        path: `${audience.prefix}/tools`,
        unknownAfter: 'after must be the tool_id of a tool in the list',
      }),
      {
        query: ListToolsQuery,
        response: { 200: t.Array(ToolResponse), ...errorResponses(401, 422) },
        detail: { operationId: 'listTools', summary: "List the caller's tools, newest first" },
      },
    )
    .get('/:tool_id', tool.read, {
      params: ToolParams,
      response: { 200: ToolResponse, ...errorResponses(401, 404) },
      detail: { operationId: 'getTool', summary: 'Read one tool' },
    })
    .patch(
      '/:tool_id',
      async ({ caller, params, body }) => {
        if (body.type !== undefined)
          throw new ApiError(422, [
            { loc: ['body', 'type'], msg: "A tool's type cannot change; make a new tool", type: 'immutable_field' },
          ]);
        const tool = await own(caller.accountId, params.tool_id);
        if (body.name !== undefined) await refuseTakenName(caller.accountId, body.name, tool.id);
        const problems = await fieldProblems(tool.type, body, false);
        if (problems.length > 0) throw new ApiError(422, problems);
        let row: typeof tool | undefined;
        try {
          [row] = await db
            .update(tools)
            .set(
              sentFields(body, {
                name: 'name',
                description: 'description',
                parameters: 'parameters',
                url: 'url',
                timeout_ms: 'timeoutMs',
              }),
            )
            .where(isOwned(tools, caller.accountId, params.tool_id))
            .returning();
        } catch (error) {
          if (isUniqueViolation(error)) throw duplicateName(body.name ?? tool.name);
          throw error;
        }
        if (!row) throw notFound('Tool');
        return presentTool(row);
      },
      {
        params: ToolParams,
        body: UpdateToolRequest,
        parse: 'json',
        response: { 200: ToolResponse, ...errors },
        detail: {
          operationId: 'updateTool',
          summary: 'Change a tool: name, description, parameters, url, timeout_ms',
          description:
            'Sessions already running keep the tools they started with, and call a webhook tool as it is now.',
        },
      },
    )
    .delete('/:tool_id', tool.remove(), {
      params: ToolParams,
      response: { 204: t.Void(), ...errorResponses(401, 404) },
      detail: {
        operationId: 'deleteTool',
        summary: "Delete a tool; identities drop it, and a running session's next call to it is an error",
      },
    });
}
