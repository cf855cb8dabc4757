// Admission (docs/api.md#sessions-start): a session starts only while some live worker has a
// slot for it. Free slots are what the live workers last reported free, less the sessions no
// report counts yet: started (or dispatched again) and not listed by a worker's heartbeat
// since. A session is listed from the moment its job is taken, before the job joins the room. Two starts racing for the last slot can both
// pass; the loser ends as `agent_unavailable`, as before admission.
//
// The fair share (decisions.md#sessions): while few slots are free, the last of them are kept
// for accounts that run no session, so one account cannot take every agent from the others.
// Its sessions nobody has joined yet count as running: they cannot starve anyone either. An
// account's test sessions count with its live ones: a test key is no second account here.

import { and, count, eq, gt, inArray, isNull, lt, ne, or, sql } from 'drizzle-orm';
import { ownerAccountIds } from '../accounts/index.ts';
import { HEARTBEAT_TTL_SECONDS } from '../contract/index.ts';
import { secondsAgo } from '../db/clock.ts';
import type { Queryable } from '../db/index.ts';
import { ApiError } from '../http/errors.ts';
import { limitReached } from '../limits/index.ts';
import { sessions } from '../sessions/schema.ts';
import { agentWorkers } from './schema.ts';

/**
 * How long after its heartbeat's lifetime a worker still counts here: twice the lifetime in all
 * (6 s since its last beat). A loaded host held a live worker's beats, or this process's reading
 * of them, past their 3 s (the agent's "process not scheduled", the API's loop stalls of 1–2.6 s),
 * and starts were refused 503 with the worker idle. Refusing a start costs the customer more than
 * counting a dead worker a few seconds longer (such a start ends `agent_unavailable`, uncharged).
 * A lost job is still noticed after the lifetime alone (agent-watch.ts); a draining worker stops
 * counting at once.
 */
export const ADMISSION_GRACE_SECONDS = HEARTBEAT_TTL_SECONDS;

export interface SlotCount {
  /** Workers heard from within their heartbeat's lifetime and the grace, not draining. */
  workers: number;
  /** Their slots, taken or free. */
  capacity: number;
  free: number;
}

/** What a 503 tells a client to wait: about one heartbeat round, long enough for a slot to show. */
const ADMISSION_RETRY_AFTER_SECONDS = 5;
/** What a 429 for the fair share tells a client to wait: its own sessions end at their own pace. */
const FAIR_SHARE_RETRY_AFTER_SECONDS = 15;

export interface AdmissionSettings {
  /** The pending window: sessions this young not yet reached by their agent hold a slot. */
  agentTimeoutSeconds: number;
  /** The share of the fleet's slots (percent, rounded up) kept for accounts that run none; 0: none kept. */
  reservedPercent: number;
}

/** The slots kept for accounts that run no session, out of `capacity`. */
export function reservedSlots(capacity: number, reservedPercent: number): number {
  return Math.ceil((capacity * reservedPercent) / 100);
}

/**
 * Throws unless `accountId` may start a session now: 503 while no slot is free for it (none at
 * all, or only reserved ones and it runs none… then it may take them), 429 while it runs
 * sessions and only the reserved slots are left.
 */
export async function admitSession(
  q: Queryable,
  accountId: string,
  agentName: string,
  settings: AdmissionSettings,
): Promise<void> {
  const slots = await freeAgentSlots(q, agentName, settings.agentTimeoutSeconds);
  const reserved = reservedSlots(slots.capacity, settings.reservedPercent);
  if (slots.free > reserved) return;
  const running = reserved > 0 ? await runningSessions(q, accountId) : 0;
  if (running > 0) {
    throw limitReached(
      `Nearly every agent is busy and this account runs ${running} session${running === 1 ? '' : 's'}: the last ${reserved} free are kept for accounts that run none`,
      FAIR_SHARE_RETRY_AFTER_SECONDS,
    );
  }
  if (slots.free <= 0) {
    const detail = slots.workers ? 'Every agent is busy; retry shortly' : 'No agent worker is running; retry shortly';
    throw new ApiError(503, detail, { 'retry-after': String(ADMISSION_RETRY_AFTER_SECONDS) });
  }
}

async function runningSessions(q: Queryable, accountId: string): Promise<number> {
  const [row] = await q
    .select({ n: count() })
    .from(sessions)
    .where(and(inArray(sessions.accountId, ownerAccountIds(accountId)), eq(sessions.status, 'running')));
  return Number(row?.n ?? 0);
}

/** `forSession`: the session a slot is sought for, not counted among the ones waiting. */
export async function freeAgentSlots(
  db: Queryable,
  agentName: string,
  pendingWindowSeconds: number,
  forSession?: string,
): Promise<SlotCount> {
  // The database's clock, not this process's: every API process then agrees.
  const [fleet] = await db
    .select({
      workers: count(),
      capacity: sql<number>`coalesce(sum(${agentWorkers.capacity}), 0)::int`,
      free: sql<number>`coalesce(sum(greatest(${agentWorkers.capacity} - ${agentWorkers.runningJobs}, 0)), 0)::int`,
    })
    .from(agentWorkers)
    .where(
      and(
        eq(agentWorkers.agentName, agentName),
        gt(agentWorkers.expiresAt, secondsAgo(ADMISSION_GRACE_SECONDS)),
        eq(agentWorkers.draining, false),
      ),
    );
  if (!fleet?.workers) return { workers: 0, capacity: 0, free: 0 };
  const [pending] = await db
    .select({ n: count() })
    .from(sessions)
    .where(
      and(
        eq(sessions.status, 'running'),
        gt(sessions.createdAt, secondsAgo(pendingWindowSeconds)),
        // Listed by a heartbeat (it alone sets the worker) since its last dispatch: counted there.
        or(
          isNull(sessions.agentWorkerId),
          isNull(sessions.agentSeenAt),
          lt(sessions.agentSeenAt, sql`coalesce(${sessions.dispatchedAt}, ${sessions.createdAt})`),
        ),
        forSession ? ne(sessions.id, forSession) : undefined,
      ),
    );
  return {
    workers: Number(fleet.workers),
    capacity: Number(fleet.capacity),
    free: Number(fleet.free) - Number(pending?.n ?? 0),
  };
}
