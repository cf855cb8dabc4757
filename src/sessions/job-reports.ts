// POST /internal/sessions/{id}/reports (docs/api.md#internal): what a session's agent job
// reports (src/contract/job-reports.ts): its arrival, the avatar streaming, each minute to
// charge, the visitor leaving, transcript turns, each agent turn's quality. Each job holds a
// token for its own session.
import { eq } from 'drizzle-orm';
import { Elysia } from 'elysia';
import { jobSession } from '../auth/index.ts';
import { JobReport } from '../contract/index.ts';
import type { Database } from '../db/index.ts';
import { ApiError } from '../http/errors.ts';
import { log } from '../logging/index.ts';
import { recordOutcome } from '../outcomes/index.ts';
import { recordMemory } from '../visitors/index.ts';
import type { AgentWatch } from './agent-watch.ts';
import type { SessionBilling } from './billing.ts';
import { SessionParams } from './contract.ts';
import type { SessionLifecycle } from './lifecycle.ts';
import { recordOrderOutcome } from './orders.ts';
import { observeTurn, recordTurnMetrics } from './quality.ts';
import { sessions } from './schema.ts';
import { recordSummary } from './summary.ts';
import { recordTurn } from './transcripts.ts';
import { recordUsage } from './usage-reports.ts';

export interface JobReportDeps {
  db: Database;
  billing: SessionBilling;
  lifecycle: SessionLifecycle;
  agentWatch: AgentWatch;
}

type SessionRow = typeof sessions.$inferSelect;

export function jobReportRoutes(deps: JobReportDeps) {
  const { db } = deps;
  return new Elysia({ prefix: '/internal', detail: { hide: true } }).post(
    '/sessions/:session_id/reports',
    async ({ params, body, request, set }) => {
      const session = await jobSession(db, request, params.session_id);
      // Any report proves the job reached the room, whether or not LiveKit's webhooks reach us.
      if (!session.agentJoinedAt) await deps.lifecycle.markAgentJoined(session.id);
      if ((await followJob(deps, session, body)) || (await keepRecord(deps, session, body))) return { ok: true };
      if (session.status === 'ended') throw new ApiError(409, 'The session has ended');
      return actOnRunning(deps, session, body, set);
    },
    { params: SessionParams, body: JobReport, parse: 'json' },
  );
}

/** Logs a step answered before it is done (the job is answered at once; the step follows). */
const inBackground = (step: Promise<unknown>, sessionId: string, what: string) =>
  void step.catch((e) => log.error({ err: e, session_id: sessionId }, what));

/** Who is in the room: the job and the visitor coming and going. False for any other report. */
async function followJob({ lifecycle, agentWatch }: JobReportDeps, session: SessionRow, body: JobReport) {
  switch (body.type) {
    case 'agent_joined':
      return true;
    case 'agent_leaving':
      // Answered at once: the job is on its way out; the move (or the ending) follows.
      inBackground(
        agentWatch.onAgentLeaving(session.id, body.reason ?? 'worker_stopping'),
        session.id,
        'moving a session to another worker failed',
      );
      return true;
    case 'visitor_joined':
      if (session.status === 'running') await lifecycle.markJoined(session.id);
      return true;
    case 'visitor_left':
      await lifecycle
        .visitorLeft(session.id)
        .catch((e) => log.error({ err: e, session_id: session.id }, 'ending a session failed'));
      return true;
    default:
      return false;
  }
}

/** What the session leaves on record, kept whenever it arrives (the end included). False for any other report. */
async function keepRecord({ db }: JobReportDeps, session: SessionRow, body: JobReport) {
  switch (body.type) {
    case 'avatar_fallback': {
      // It says what the session streamed.
      const { pipeline_id, fallback, reason } = body;
      await db
        .update(sessions)
        .set({ avatarFallback: { pipeline_id, fallback, reason } })
        .where(eq(sessions.id, session.id));
      return true;
    }
    case 'transcript':
      // The last turns may arrive while the job leaves a session that just ended.
      await recordTurn(db, session.id, body);
      return true;
    case 'usage':
      // A job's last count comes as it leaves.
      await recordUsage(db, session.id, body);
      return true;
    case 'turn_metrics':
      // Observed only the first time it counts.
      if (await recordTurnMetrics(db, session.id, body)) observeTurn(body);
      return true;
    case 'order':
      // How the agent took an order (orders.ts): the call waiting for it reads the row.
      await recordOrderOutcome(db, session.id, body);
      return true;
    // Written once the session ended: summary.ts, src/outcomes, src/visitors/memory.ts.
    case 'summary':
      await recordSummary(db, session, body);
      return true;
    case 'outcome':
      await recordOutcome(db, session, body);
      return true;
    case 'memory':
      await recordMemory(db, session, body);
      return true;
    default:
      return false;
  }
}

/** What a running session's job asks of it: an ending, the avatar streaming, a minute to charge. */
async function actOnRunning(
  { lifecycle, billing }: JobReportDeps,
  session: SessionRow,
  body: JobReport,
  set: { status?: number | string },
) {
  // Endings are answered at once, like a lack of credits: the notice and the room's closing follow.
  if (body.type === 'visitor_idle') {
    inBackground(lifecycle.endForIdle(session.id), session.id, 'ending an idle session failed');
    return { ok: true };
  }
  if (body.type === 'agent_ended') {
    inBackground(lifecycle.endForAgent(session.id), session.id, 'ending a session for its agent failed');
    return { ok: true };
  }
  if (body.type === 'avatar_streaming') {
    await lifecycle.markStreaming(session.id, body.at ? new Date(body.at) : new Date());
    return { ok: true };
  }
  if (body.type !== 'minute') return { ok: true };
  // A minute is only reported while the visitor is in: that is a join, even where
  // LiveKit's webhooks are not configured to tell us.
  await lifecycle.markJoined(session.id);
  const result = await billing.chargeMinute(session.id, body.index);
  if (result === 'ended') throw new ApiError(409, 'The session has ended');
  if (result === 'insufficient') {
    inBackground(lifecycle.endForInsufficientCredits(session.id), session.id, 'ending a session failed');
    set.status = 402;
    return { ok: false, detail: 'Insufficient credits' };
  }
  return { ok: true, charged: result === 'charged' };
}
