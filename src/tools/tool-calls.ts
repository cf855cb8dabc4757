import { Elysia } from 'elysia';
import { jobSession } from '../auth/index.ts';
import { type ToolCallAnswer, ToolCallRequest } from '../contract/agent-tools.ts';
import { isOwned } from '../db/owned.ts';
import { ApiError } from '../http/errors.ts';
import { log } from '../logging/index.ts';
import { SessionParams } from '../sessions/contract.ts';
import { systemResolver } from '../webhooks/index.ts';
import type { ToolRouteDeps } from './deps.ts';
import { argumentsProblem } from './parameters.ts';
import { tools } from './schema.ts';
import { callWebhookTool } from './webhook-call.ts';

const GONE = 'This tool is no longer available; tell the visitor you cannot do this right now.';

export function toolCallRoutes(deps: ToolRouteDeps) {
  const { db } = deps;
  return new Elysia({ prefix: '/internal', detail: { hide: true } }).post(
    '/sessions/:session_id/tool-calls',
    async ({ params, body, request }): Promise<ToolCallAnswer> => {
      const session = await jobSession(db, request, params.session_id);
      const started = performance.now();
      const answer = (outcome: ToolCallAnswer['outcome'], result: string): ToolCallAnswer => ({
        outcome,
        result,
        duration_ms: Math.round(performance.now() - started),
      });
      const fields = { session_id: session.id, tool_id: body.tool_id, call_id: body.call_id };
      if (session.status === 'ended') return answer('error', 'The conversation has ended; the tool was not called.');
      // The session's tools were fixed at its start; one deleted since is gone from the account too.
      const [tool] = session.toolIds.includes(body.tool_id)
        ? await db
            .select()
            .from(tools)
            .where(isOwned(tools, session.accountId, body.tool_id))
        : [];
      if (!tool) {
        log.info(fields, 'tool call refused: the tool is not available to this session');
        return answer('error', GONE);
      }
      if (tool.type !== 'webhook' || !tool.url || !tool.secret)
        throw new ApiError(422, [
          {
            loc: ['body', 'tool_id'],
            msg: `${tool.name} is a ${tool.type} tool: the job runs it itself; only webhook tools are called here`,
            type: 'not_a_webhook_tool',
          },
        ]);
      const invalid = argumentsProblem(tool.parameters, body.arguments);
      if (invalid) {
        log.info({ ...fields, tool: tool.name }, 'tool call arguments invalid; not called');
        return answer('invalid_arguments', invalid);
      }
      const called = await callWebhookTool(
        tool,
        { sessionId: session.id, identityId: session.identityId, callId: body.call_id, arguments: body.arguments },
        { allowPrivate: deps.webhooks.allowPrivate, resolve: deps.resolve ?? systemResolver },
      );
      const result = answer(called.outcome, called.result);
      log.info(
        { ...fields, tool: tool.name, outcome: called.outcome, status: called.status, duration_ms: result.duration_ms },
        'tool called',
      );
      return result;
    },
    {
      params: SessionParams,
      body: ToolCallRequest,
      parse: 'json',
    },
  );
}
