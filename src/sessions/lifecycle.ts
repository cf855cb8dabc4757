// How sessions end: by the API, when the visitor leaves (LiveKit webhook or the agent's
// report), when nobody joins in time, when no agent comes, at the maximum duration, when
// credits run out, or when the visitor went quiet (the agent's report).
// Every path goes through `end`, which records one reason and gives back any unused hold.

import { ParticipantInfo_Kind } from '@livekit/protocol';
import { and, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import { DataPacket_Kind, type WebhookEvent } from 'livekit-server-sdk';
import { NOTICE_TOPIC, type Notice } from '../contract/index.ts';
import type { Database } from '../db/index.ts';
import { isNotFound, type LivekitConnection } from '../livekit/index.ts';
import { log } from '../logging/index.ts';
import { firstFrameSeconds, sessionsEnded } from '../metrics/index.ts';
import { announceOutcomeAtEnd, outcomeAtEnd } from '../outcomes/index.ts';
import { writeEvent } from '../webhooks/index.ts';
import type { SessionBilling } from './billing.ts';
import { endOverdueSessions } from './overdue.ts';
import { type EndReason, sessions } from './schema.ts';
import { announceSummaryAtEnd, summaryAtEnd } from './summary.ts';
import { durationSeconds, foldUsage, usageSeconds } from './usage-reports.ts';

/** How long a notice gets to reach the visitor before the room closes (500 ms lost one on a loaded CI machine). */
const NOTICE_LEAD_MS = 1_000;

export type SessionRow = typeof sessions.$inferSelect;

/** LiveKit did not confirm the room is gone: the session stays running so a retry can finish. */
export class RoomClosureUnconfirmed extends Error {}

export interface LifecycleDeps {
  db: Database;
  billing: SessionBilling;
  livekit: LivekitConnection;
  joinTimeoutSeconds: number;
  agentTimeoutSeconds: number;
  /** How long a visitor who left may take to come back (SESSION_REJOIN_SECONDS); default 0: the session ends at once. */
  rejoinSeconds?: number;
  /** After a session ended (e.g. cloned voices it kept alive can go); failures are logged. */
  afterEnd?: () => Promise<unknown>;
}

export class SessionLifecycle {
  constructor(private readonly deps: LifecycleDeps) {}

  async find(sessionId: string): Promise<SessionRow | undefined> {
    const [row] = await this.deps.db.select().from(sessions).where(eq(sessions.id, sessionId));
    return row;
  }

  /**
   * End a session: close its room (unless LiveKit already did), then record the reason: the
   * one an ending already closing the room wrote down, else this one. Ending an ended session
   * changes nothing. Throws RoomClosureUnconfirmed.
   */
  async end(
    sessionId: string,
    reason: EndReason,
    options: { closeRoom: boolean } = { closeRoom: true },
  ): Promise<SessionRow> {
    const current = await this.find(sessionId);
    if (!current) throw new Error(`no session ${sessionId}`);
    if (current.status === 'ended') return current;
    if (options.closeRoom) {
      // The first ending to close the room names the cause; the webhooks it sets off agree.
      const [claimed] = await this.deps.db
        .update(sessions)
        .set({ closingReason: reason })
        .where(and(eq(sessions.id, sessionId), eq(sessions.status, 'running'), isNull(sessions.closingReason)))
        .returning({ id: sessions.id });
      // An agent not yet there need not come: its dispatch goes first, so no worker spends a
      // job process on a room about to vanish (best effort; the worker refuses gone rooms too).
      if (!current.agentJoinedAt)
        await this.deps.livekit.dispatches.deleteDispatch(current.dispatchId, sessionId).catch(() => undefined);
      try {
        await this.deps.livekit.rooms.deleteRoom(sessionId);
      } catch (error) {
        if (!isNotFound(error) && !(await this.#closedMeanwhile(sessionId))) {
          // The room stays open and the session running: this cause is not settled.
          if (claimed)
            await this.deps.db
              .update(sessions)
              .set({ closingReason: null })
              .where(and(eq(sessions.id, sessionId), eq(sessions.status, 'running')));
          throw new RoomClosureUnconfirmed(`room ${sessionId} could not be closed: ${(error as Error).message}`);
        }
      }
    }
    let endedHere = false;
    const row = await this.deps.db.transaction(async (tx) => {
      const endedAt = new Date();
      const [ended] = await tx
        .update(sessions)
        // The running job's usage counts up to the end: the webhook and every read agree.
        .set({
          status: 'ended',
          endReason: sql`coalesce(${sessions.closingReason}, ${reason})`,
          endedAt,
          ...foldUsage(endedAt),
          ...summaryAtEnd(),
          ...outcomeAtEnd(),
        })
        .where(and(eq(sessions.id, sessionId), eq(sessions.status, 'running')))
        .returning();
      if (!ended) return (await tx.select().from(sessions).where(eq(sessions.id, sessionId)))[0]!;
      await this.deps.billing.release(tx, ended);
      await writeEvent(tx, ended.accountId, 'session.ended', {
        session_id: ended.id,
        identity_id: ended.identityId,
        reason: ended.endReason ?? reason,
        billed_minutes: ended.billedMinutes,
        credits_charged: ended.creditsCharged,
        ...usageSeconds(ended),
        duration_seconds: durationSeconds(ended),
        created_at: ended.createdAt.toISOString(),
        ended_at: ended.endedAt!.toISOString(),
      });
      await announceSummaryAtEnd(tx, ended);
      await announceOutcomeAtEnd(tx, ended);
      endedHere = true;
      return ended;
    });
    if (endedHere) {
      sessionsEnded.inc({ reason: row.endReason ?? reason });
      log.info(
        { session_id: sessionId, account_id: row.accountId, reason: row.endReason, billed_minutes: row.billedMinutes },
        'session ended',
      );
    }
    // After the commit, and not awaited: an ending never waits on a voice provider.
    void this.deps
      .afterEnd?.()
      .catch((error) => log.error({ err: error, session_id: sessionId }, 'the work after a session ended failed'));
    return row;
  }

  /**
   * After a refused room deletion: true when the room is gone anyway, as when the visitor's
   * leaving closed it (and ended the session) while this ending was under way.
   */
  async #closedMeanwhile(sessionId: string): Promise<boolean> {
    if ((await this.find(sessionId))?.status === 'ended') return true;
    return this.#roomGone(sessionId);
  }

  /** True when LiveKit says the session's room does not exist; false when it does or cannot be asked. */
  async #roomGone(sessionId: string): Promise<boolean> {
    try {
      return (await this.deps.livekit.rooms.listRooms([sessionId])).length === 0;
    } catch {
      return false;
    }
  }

  /**
   * The session's visitor left (its job saw it, or LiveKit's webhook said so). The room is
   * asked first: a job whose own connection broke (LiveKit killed and restarted) sees everyone
   * leave a room that is gone, and that session ended because its room closed. Otherwise the
   * session waits SESSION_REJOIN_SECONDS for the visitor to come back (a reloaded page, a
   * network that needed a new connection), billing nothing; the sweep ends it `client_left`
   * if they do not. LiveKit unreachable: the word stands.
   */
  async visitorLeft(sessionId: string): Promise<void> {
    const roomGone = await this.#roomGone(sessionId);
    if (roomGone || !this.deps.rejoinSeconds) {
      await this.end(sessionId, roomGone ? 'room_closed' : 'client_left', { closeRoom: !roomGone });
      return;
    }
    await this.deps.db
      .update(sessions)
      .set({ visitorGoneSince: sql`coalesce(${sessions.visitorGoneSince}, now())` })
      .where(and(eq(sessions.id, sessionId), eq(sessions.status, 'running')));
  }

  /** Credits ran out: tell the room, then end the session with that reason (docs/api.md#notices). */
  async endForInsufficientCredits(sessionId: string): Promise<void> {
    await this.notify(sessionId, { type: 'insufficient_credits', session_id: sessionId });
    await this.end(sessionId, 'insufficient_credits');
  }

  /** A reliable data message to everyone in the room, on the notice topic. */
  private async notify(sessionId: string, notice: Notice): Promise<void> {
    try {
      await this.deps.livekit.rooms.sendData(
        sessionId,
        new TextEncoder().encode(JSON.stringify(notice)),
        DataPacket_Kind.RELIABLE,
        { topic: NOTICE_TOPIC },
      );
      // LiveKit's answer says nothing of delivery, and the room's close (on the signalling
      // socket) can overtake data still in flight on the visitor's data channel: give it a moment.
      await Bun.sleep(NOTICE_LEAD_MS);
    } catch (error) {
      log.warn({ err: error, session_id: sessionId, notice: notice.type }, 'a notice could not be sent');
    }
  }

  /** The visitor is in the room: its first arrival is recorded, and one who came back is no longer waited for. */
  async markJoined(sessionId: string): Promise<void> {
    await this.deps.db
      .update(sessions)
      .set({ visitorGoneSince: null })
      .where(and(eq(sessions.id, sessionId), isNotNull(sessions.visitorGoneSince)));
    const [marked] = await this.deps.db
      .update(sessions)
      .set({ joinedAt: new Date() })
      .where(and(eq(sessions.id, sessionId), isNull(sessions.joinedAt)))
      .returning({ joinedAt: sessions.joinedAt, streamingStartedAt: sessions.streamingStartedAt });
    if (marked) observeFirstFrame(marked);
  }

  async markAgentJoined(sessionId: string): Promise<void> {
    await this.deps.db
      .update(sessions)
      .set({ agentJoinedAt: sql`now()`, agentSeenAt: sql`now()` })
      .where(and(eq(sessions.id, sessionId), isNull(sessions.agentJoinedAt)));
  }

  /**
   * Its agent's worker is stopping and no other worker has room: tell the visitor, then end
   * the session (a deployment's restart, say).
   */
  async endForRestart(sessionId: string): Promise<void> {
    await this.notify(sessionId, { type: 'service_restarting', session_id: sessionId });
    await this.end(sessionId, 'service_restarting');
  }

  /**
   * No agent came (every worker full or down: LiveKit does not offer the dispatch again):
   * tell the visitor, then end the session rather than leave them facing an empty room.
   */
  async endForMissingAgent(sessionId: string): Promise<void> {
    await this.notify(sessionId, { type: 'agent_unavailable', session_id: sessionId });
    await this.end(sessionId, 'agent_unavailable');
  }

  /**
   * The visitor stayed silent through the agent's question and as long again (the job's
   * `visitor_idle`): tell the room, then end the session, billed up to now as any ending.
   */
  async endForIdle(sessionId: string): Promise<void> {
    await this.notify(sessionId, { type: 'idle', session_id: sessionId });
    await this.end(sessionId, 'idle');
  }

  /** The agent ended the conversation (an `end_session` tool): it said goodbye already, so no notice. */
  async endForAgent(sessionId: string): Promise<void> {
    await this.end(sessionId, 'agent_ended');
  }

  async markStreaming(sessionId: string, at: Date): Promise<void> {
    const [marked] = await this.deps.db
      .update(sessions)
      .set({ streamingStartedAt: at })
      .where(and(eq(sessions.id, sessionId), isNull(sessions.streamingStartedAt)))
      .returning({ joinedAt: sessions.joinedAt, streamingStartedAt: sessions.streamingStartedAt });
    if (marked) observeFirstFrame(marked);
  }

  /** React to LiveKit's webhooks (already verified by the caller). */
  async onWebhook(event: WebhookEvent): Promise<void> {
    const sessionId = event.room?.name;
    if (!sessionId) return;
    const session = await this.find(sessionId);
    if (!session || session.status === 'ended') return;
    const isVisitor = event.participant?.identity === session.visitorIdentity;
    if (event.event === 'participant_joined' && event.participant?.kind === ParticipantInfo_Kind.AGENT)
      await this.markAgentJoined(sessionId);
    else if (event.event === 'participant_joined' && isVisitor) await this.markJoined(sessionId);
    else if (event.event === 'participant_left' && isVisitor) await this.visitorLeft(sessionId);
    else if (event.event === 'room_finished')
      await this.end(sessionId, session.joinedAt ? 'room_closed' : 'no_join', { closeRoom: false });
  }

  /** End sessions past their deadlines (overdue.ts): nobody joined in time, no agent came, the maximum duration, a visitor gone, a room LiveKit lost. */
  async sweep(now = new Date()): Promise<number> {
    return endOverdueSessions(this, this.deps, now);
  }
}

/** Join → first avatar frame, once both are known (whichever came second records it); 0 when the avatar was there first. */
function observeFirstFrame({
  joinedAt,
  streamingStartedAt,
}: {
  joinedAt: Date | null;
  streamingStartedAt: Date | null;
}): void {
  if (joinedAt && streamingStartedAt)
    firstFrameSeconds.observe(Math.max(0, streamingStartedAt.getTime() - joinedAt.getTime()) / 1000);
}
