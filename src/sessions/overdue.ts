// The sweep's endings (SessionLifecycle.sweep): running sessions past a deadline (nobody joined
// in time, no agent came, the maximum duration), whose visitor left longer ago than they may
// take to come back, or whose room LiveKit lost without telling. Each goes through the
// lifecycle's `end` (lifecycle.ts), one failure not stopping the others.
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import { secondsAfter } from '../db/clock.ts';
import type { Database } from '../db/index.ts';
import type { LivekitConnection } from '../livekit/index.ts';
import { log } from '../logging/index.ts';
import { type EndReason, sessions } from './schema.ts';

/** What the sweep asks of the lifecycle (lifecycle.ts: SessionLifecycle). */
interface Endings {
  end(sessionId: string, reason: EndReason, options?: { closeRoom: boolean }): Promise<unknown>;
  endForMissingAgent(sessionId: string): Promise<void>;
  markJoined(sessionId: string): Promise<void>;
}

/** Its part of the lifecycle's deps. */
interface OverdueDeps {
  db: Database;
  livekit: LivekitConnection;
  joinTimeoutSeconds: number;
  agentTimeoutSeconds: number;
  rejoinSeconds?: number;
}

/** Sessions younger than this are not checked against LiveKit's rooms (a node may not list a new room at once). */
const ROOM_CHECK_AFTER_MS = 10_000;
/** Room names per listRooms call. */
const ROOM_CHECK_BATCH = 200;

/** Ends the sessions past their deadlines; how many. */
export async function endOverdueSessions(lifecycle: Endings, deps: OverdueDeps, now = new Date()): Promise<number> {
  const joinCutoff = new Date(now.getTime() - deps.joinTimeoutSeconds * 1000);
  const agentCutoff = new Date(now.getTime() - deps.agentTimeoutSeconds * 1000);
  // A raw expression has no column to encode a Date with: send the instant as text.
  const overtime = lt(
    secondsAfter(sessions.createdAt, sessions.maxDurationSeconds),
    sql`${now.toISOString()}::timestamptz`,
  );
  const due = await deps.db
    .select({
      id: sessions.id,
      waitingSince: sql<Date>`coalesce(${sessions.agentWaitSince}, ${sessions.createdAt})`.mapWith(sessions.createdAt),
      joinedAt: sessions.joinedAt,
      agentJoinedAt: sessions.agentJoinedAt,
      overtime: sql<boolean>`${overtime}`,
    })
    .from(sessions)
    .where(
      and(
        eq(sessions.status, 'running'),
        or(
          and(isNull(sessions.joinedAt), lt(sessions.createdAt, joinCutoff)),
          and(
            isNull(sessions.agentJoinedAt),
            lt(
              sql`coalesce(${sessions.agentWaitSince}, ${sessions.createdAt})`,
              sql`${agentCutoff.toISOString()}::timestamptz`,
            ),
          ),
          overtime,
        ),
      ),
    );
  let ended = (await endVanished(lifecycle, deps, now)) + (await endAbandoned(lifecycle, deps, now));
  ended += await endEach(due, 'an overdue session', async (session) => {
    const agentLate = !session.agentJoinedAt && session.waitingSince < agentCutoff;
    if (session.overtime) await lifecycle.end(session.id, session.joinedAt ? 'max_duration' : 'no_join');
    // The missing agent is the cause even when nobody joined either; a visitor gets told.
    else if (agentLate && session.joinedAt) await lifecycle.endForMissingAgent(session.id);
    else if (agentLate) await lifecycle.end(session.id, 'agent_unavailable');
    else await lifecycle.end(session.id, 'no_join');
    return true;
  });
  return ended;
}

/**
 * Ends each session `end` takes (it answers whether it ended it) and counts them; a failure is
 * logged, and the next sweep tries again.
 */
async function endEach<S extends { id: string }>(
  due: S[],
  what: string,
  end: (session: S) => Promise<boolean>,
): Promise<number> {
  let ended = 0;
  for (const session of due) {
    try {
      if (await end(session)) ended++;
    } catch (error) {
      log.error({ err: error, session_id: session.id }, `ending ${what} failed (retrying on the next sweep)`);
    }
  }
  return ended;
}

/**
 * Sessions whose visitor left longer ago than SESSION_REJOIN_SECONDS. LiveKit is asked
 * first: a `participant_left` that came after the visitor was back (webhooks are not in
 * order) must not end their session.
 */
async function endAbandoned(lifecycle: Endings, deps: OverdueDeps, now: Date): Promise<number> {
  if (!deps.rejoinSeconds) return 0;
  const cutoff = new Date(now.getTime() - deps.rejoinSeconds * 1000);
  const abandoned = await deps.db
    .select({ id: sessions.id, visitorIdentity: sessions.visitorIdentity })
    .from(sessions)
    .where(and(eq(sessions.status, 'running'), lt(sessions.visitorGoneSince, cutoff)));
  return endEach(abandoned, 'a session its visitor left', async (session) => {
    const back = await deps.livekit.rooms.listParticipants(session.id).then(
      (participants) => participants.some((p) => p.identity === session.visitorIdentity),
      () => false,
    );
    if (back) {
      await lifecycle.markJoined(session.id);
      return false;
    }
    await lifecycle.end(session.id, 'client_left');
    return true;
  });
}

/**
 * Running sessions whose room LiveKit no longer has: it lost them without a room_finished
 * webhook (a LiveKit node killed and restarted, say), so nobody else would end them; their
 * visitor was disconnected with the room. Ended like a room LiveKit closed. Nothing is done
 * while LiveKit does not answer.
 */
async function endVanished(lifecycle: Endings, deps: OverdueDeps, now: Date): Promise<number> {
  const running = await deps.db
    .select({ id: sessions.id, joinedAt: sessions.joinedAt })
    .from(sessions)
    .where(and(eq(sessions.status, 'running'), lt(sessions.createdAt, new Date(now.getTime() - ROOM_CHECK_AFTER_MS))));
  let ended = 0;
  for (let i = 0; i < running.length; i += ROOM_CHECK_BATCH) {
    const batch = running.slice(i, i + ROOM_CHECK_BATCH);
    let rooms: Set<string>;
    try {
      rooms = new Set((await deps.livekit.rooms.listRooms(batch.map((s) => s.id))).map((room) => room.name));
    } catch {
      return ended;
    }
    for (const session of batch) {
      if (rooms.has(session.id)) continue;
      log.warn({ session_id: session.id }, "the session's room is gone from LiveKit; ending it");
      await lifecycle
        .end(session.id, session.joinedAt ? 'room_closed' : 'no_join', { closeRoom: false })
        .catch((error) =>
          log.error({ err: error, session_id: session.id }, 'ending a session whose room is gone failed'),
        );
      ended++;
    }
  }
  return ended;
}
