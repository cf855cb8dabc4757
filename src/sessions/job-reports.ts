// POST /internal/sessions/{id}/reports (docs/api.md#internal): what a session's agent job
// reports (src/contract/job-reports.ts): its arrival, the avatar streaming, each minute to
// charge, the visitor leaving, transcript turns, each agent turn's quality. Each job holds a
// token for its own session.
import { and, eq } from 'drizzle-orm';
import { Elysia } from 'elysia';
import { hashApiKey } from '../auth/api-keys.ts';
import { JobReport } from '../contract/index.ts';
import type { Database } from '../db/index.ts';
import { ApiError } from '../http/errors.ts';
import type { SessionBilling } from './billing.ts';
import { SessionParams } from './contract.ts';
import type { AgentWatch } from './agent-watch.ts';
import type { SessionLifecycle } from './lifecycle.ts';
import { sessions } from './schema.ts';
import { log } from '../logging/index.ts';
import { observeTurn, recordTurnMetrics } from './quality.ts';
import { recordTurn } from './transcripts.ts';

export interface JobReportDeps {
  db: Database;
  billing: SessionBilling;
  lifecycle: SessionLifecycle;
  agentWatch: AgentWatch;
}

export function jobReportRoutes(deps: JobReportDeps) {
  const { db, billing, lifecycle } = deps;
  return new Elysia({ prefix: '/internal', detail: { hide: true } })
    .post(
      '/sessions/:session_id/reports',
      async ({ params, body, request, set }) => {
        // Each job holds a token for its own session only.
        const token = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
        const [session] = token
          ? await db
              .select()
              .from(sessions)
              .where(and(eq(sessions.id, params.session_id), eq(sessions.reportTokenHash, hashApiKey(token))))
          : [];
        if (!session) throw new ApiError(401, 'Unknown session or report token');
        // Any report proves the job reached the room, whether or not LiveKit's webhooks reach us.
        if (!session.agentJoinedAt) await lifecycle.markAgentJoined(session.id);
        if (body.type === 'agent_joined') return { ok: true };
        if (body.type === 'agent_leaving') {
          // Answered at once: the job is on its way out; the move (or the ending) follows.
          void deps.agentWatch.onAgentLeaving(session.id).catch((e) => log.error({ err: e, session_id: session.id }, 'moving a session to another worker failed'));
          return { ok: true };
        }
        if (body.type === 'visitor_left') {
          await lifecycle.visitorLeft(session.id).catch((e) => log.error({ err: e, session_id: session.id }, 'ending a session failed'));
          return { ok: true };
        }
        if (body.type === 'avatar_fallback') {
          // Kept whenever it arrives: it says what the session streamed.
          const { pipeline_id, fallback, reason } = body;
          await db.update(sessions).set({ avatarFallback: { pipeline_id, fallback, reason } }).where(eq(sessions.id, session.id));
          return { ok: true };
        }
        if (body.type === 'transcript') {
          // The last turns may arrive while the job leaves a session that just ended: keep them.
          await recordTurn(db, session.id, body);
          return { ok: true };
        }
        if (body.type === 'turn_metrics') {
          // Like transcript turns, kept after the session ended; observed only the first time it counts.
          if (await recordTurnMetrics(db, session.id, body)) observeTurn(body);
          return { ok: true };
        }
        if (session.status === 'ended') throw new ApiError(409, 'The session has ended');
        if (body.type === 'avatar_streaming') {
          await lifecycle.markStreaming(session.id, body.at ? new Date(body.at) : new Date());
          return { ok: true };
        }
        // A minute is only reported while the visitor is in: that is a join, even where
        // LiveKit's webhooks are not configured to tell us.
        await lifecycle.markJoined(session.id);
        const result = await billing.chargeMinute(session.id, body.index);
        if (result === 'ended') throw new ApiError(409, 'The session has ended');
        if (result === 'insufficient') {
          // Answer the job at once; the notice and the room's closing follow.
          void lifecycle.endForInsufficientCredits(session.id).catch((e) => log.error({ err: e, session_id: session.id }, 'ending a session failed'));
          set.status = 402;
          return { ok: false, detail: 'Insufficient credits' };
        }
        return { ok: true, charged: result === 'charged' };
      },
      { params: SessionParams, body: JobReport, parse: 'json' },
    );
}
