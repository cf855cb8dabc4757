// Admission (docs/api.md#sessions-start): a session starts only while some live worker has a
// slot for it. Free slots are what the live workers last reported free, less the sessions a
// report may not count yet: started but not reached by their agent, or reached after the
// oldest of the live workers' last heartbeats. Two starts racing for the last slot can both
// pass; the loser ends as `agent_unavailable`, as before admission.
import { and, count, eq, gt, isNull, min, ne, or, sql } from 'drizzle-orm';
import type { Queryable } from '../db/index.ts';
import { sessions } from '../sessions/schema.ts';
import { agentWorkers } from './schema.ts';

export interface SlotCount {
  /** Workers heard from within their heartbeat's lifetime, not draining. */
  workers: number;
  free: number;
}

/** `forSession`: the session a slot is sought for, not counted among the ones waiting. */
export async function freeAgentSlots(db: Queryable, agentName: string, pendingWindowSeconds: number, forSession?: string): Promise<SlotCount> {
  // The database's clock, not this process's: every API process then agrees.
  const [fleet] = await db
    .select({
      workers: count(),
      free: sql<number>`coalesce(sum(greatest(${agentWorkers.capacity} - ${agentWorkers.runningJobs}, 0)), 0)::int`,
      reportedAt: min(agentWorkers.seenAt),
    })
    .from(agentWorkers)
    .where(and(eq(agentWorkers.agentName, agentName), gt(agentWorkers.expiresAt, sql`now()`), eq(agentWorkers.draining, false)));
  if (!fleet?.workers) return { workers: 0, free: 0 };
  const reportedAt = fleet.reportedAt ?? new Date(0);
  const [pending] = await db
    .select({ n: count() })
    .from(sessions)
    .where(
      and(
        eq(sessions.status, 'running'),
        gt(sessions.createdAt, sql`now() - make_interval(secs => ${pendingWindowSeconds})`),
        or(isNull(sessions.agentJoinedAt), gt(sessions.agentJoinedAt, reportedAt)),
        forSession ? ne(sessions.id, forSession) : undefined,
      ),
    );
  return { workers: Number(fleet.workers), free: Number(fleet.free) - Number(pending?.n ?? 0) };
}
