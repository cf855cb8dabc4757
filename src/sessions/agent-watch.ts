// Keeping a running session's agent (docs/api.md#session-lifecycle). LiveKit offers a dispatch
// once: a worker that was full a moment ago, or one that died with the session's job, leaves
// the visitor in an empty room. Every API process runs this watch a few times a second; a
// conditional update claims each session, so one process acts on it.
// - Lost: a session whose agent had joined, but which no live worker's heartbeat has listed
//   for HEARTBEAT_TTL_SECONDS (its worker was killed, or the job died). Its agent
//   participants are removed from the room (a stalled one must not come back beside a new
//   one) and it is dispatched again; the visitor stays in the room. Not while no worker's
//   heartbeat gets through at all, for a while: that is a busy machine more often than a dead fleet. Minutes go on from those
//   already billed: none is billed while no avatar streams.
// - Unanswered: a session whose agent has not joined REDISPATCH_AFTER_SECONDS after its last
//   dispatch, and which no live worker listed in a heartbeat since, is dispatched again, while a
//   worker has a free slot; not while LiveKit has a worker's acceptance of it on record (for
//   ACCEPTED_JOB_ARRIVES_WITHIN_SECONDS: heartbeats held back in a busy loop arrive late).
// - Leaving: a job whose worker is stopping (drained) says so before it goes: the session
//   moves to another worker at once, or, where none has room, ends with a
//   `service_restarting` notice (as a lost agent of a draining worker does). A job whose tracks
//   LiveKit never received (agent/avatar/delivery.ts) says so too, and is replaced at once.
// SESSION_AGENT_TIMEOUT_SECONDS, counted from the start or the loss, still ends a session no
// agent reaches (`agent_unavailable`).

import { JobStatus, ParticipantInfo_Kind } from '@livekit/protocol';
import { and, eq, gt, isNotNull, isNull, lt, notExists, or, sql } from 'drizzle-orm';
import { isTestAccount } from '../accounts/index.ts';
import type { AssetLinks } from '../assets/index.ts';
import { hashApiKey } from '../auth/index.ts';
import type { SessionSettings } from '../config.ts';
import { type AgentLeavingReason, HEARTBEAT_INTERVAL_SECONDS, HEARTBEAT_TTL_SECONDS } from '../contract/index.ts';
import { secondsAfter, secondsAgo } from '../db/clock.ts';
import { randomBase62 } from '../db/ids.ts';
import type { Database } from '../db/index.ts';
import { findIdentity } from '../identities/index.ts';
import type { LivekitConnection } from '../livekit/index.ts';
import { log } from '../logging/index.ts';
import { sessionMemory } from '../visitors/index.ts';
import { freeAgentSlots } from '../workers/index.ts';
import { agentWorkers } from '../workers/schema.ts';
import { paidUntil } from './billing.ts';
import { dispatchMetadata } from './dispatch.ts';
import type { SessionLifecycle, SessionRow } from './lifecycle.ts';
import { sessions } from './schema.ts';
import { sessionToolbox } from './toolbox.ts';
import { foldUsage } from './usage-reports.ts';

/**
 * A dispatch every worker refused (full: LiveKit hears their load only every 2.5 s) is lost. No
 * worker listing the session this long after its dispatch means nobody took it; one that has
 * accepted it lists it within half a second, even while its job waits for a process, so it is
 * never dispatched twice.
 */
const REDISPATCH_AFTER_SECONDS = 4;

/**
 * And only once every live worker's heartbeat has come this long after the dispatch without
 * listing it: a worker whose loop stalls (inline work in a busy process) took the job but had not
 * said so yet, and a second dispatch put a second agent in the room (its reports refused).
 * Four beats: one already on its way when the job was taken does not list it, and a beat is
 * recorded when it arrives, not when it was sent: beside a test service starting, the API's
 * loop held beats for a second while the worker itself went unscheduled, and its job joined
 * 4.4 s after the dispatch, 2 s after a second one (1 s and 2 s then).
 */
const UNANSWERED_AFTER_HEARTBEAT_SECONDS = 4 * HEARTBEAT_INTERVAL_SECONDS;

/**
 * A dispatch LiveKit says a worker accepted is not unanswered for this long after it, whatever
 * the heartbeats say: they are recorded when they arrive, and an API loop held for 2.8 s (run 97)
 * let every worker's queued beats land "after" the dispatch before the one listing it, and a
 * healthy job in the room lost its session to a second dispatch. A worker that died with the job
 * leaves LiveKit's record as it was, hence the bound: such a job is replaced after this.
 */
const ACCEPTED_JOB_ARRIVES_WITHIN_SECONDS = 20;

export interface AgentWatchDeps {
  db: Database;
  lifecycle: SessionLifecycle;
  livekit: LivekitConnection;
  settings: SessionSettings;
  agentName: string;
  /** Signed links to the identity's files, for the job to fetch. */
  assetLinks: AssetLinks;
  internalUrl: string;
  log?: (line: string) => void;
}

/**
 * After this process last failed to reach the database, this long before an agent may be taken
 * for lost: the workers' heartbeats failed to be recorded too (a Postgres crash, a failover),
 * and the first look after recovery saw every session unlisted and moved a live agent.
 */
const LOST_GRACE_AFTER_DB_FAILURE_MS = (HEARTBEAT_TTL_SECONDS + 2 * HEARTBEAT_INTERVAL_SECONDS) * 1000;

/**
 * While no worker's heartbeat gets through at all, this long since the last one before an agent
 * may be taken for lost. Silence from every worker at once is rarely every worker dying: it was a
 * machine too busy to send or record them (a blocked event loop held a lone worker's beats back
 * for two seconds, and its live agent was removed and dispatched again to the same worker). One
 * worker silent while another beats is still lost at once (failover, docs/benchmarks.md).
 */
const LOST_GRACE_WITHOUT_ANY_HEARTBEAT_SECONDS = 10;

export class AgentWatch {
  #databaseFailedAt = -Infinity;
  /** Sessions said to wait for a job LiveKit saw accepted, and since when (said once each). */
  readonly #waitingForAcceptedJob = new Map<string, number>();

  constructor(private readonly deps: AgentWatchDeps) {}

  /** Some worker's heartbeat got through lately, or none has for longer than the grace (or none ever did). */
  async #heartbeatsHeard(): Promise<boolean> {
    const [fleet] = await this.deps.db
      .select({
        heard: sql<boolean>`coalesce(bool_or(${agentWorkers.expiresAt} > now()), false)
          or coalesce(max(${agentWorkers.seenAt}) < ${secondsAgo(LOST_GRACE_WITHOUT_ANY_HEARTBEAT_SECONDS)}, true)`,
      })
      .from(agentWorkers)
      .where(eq(agentWorkers.agentName, this.deps.agentName));
    return Boolean(fleet?.heard);
  }

  /** One look at every running session; returns the ids dispatched again. */
  async tick(): Promise<string[]> {
    try {
      return await this.#look();
    } catch (error) {
      this.#databaseFailedAt = performance.now();
      throw error;
    }
  }

  async #look(): Promise<string[]> {
    // Most looks find nothing running: one indexed probe then, not the three queries below (on
    // PGlite they held an idle service's loop for 2.7 % of a core, docs/benchmarks.md).
    if (!(await this.#anyRunning())) return [];
    return [...(await this.#moveLostAgents()), ...(await this.#redispatchUnanswered())];
  }

  async #anyRunning(): Promise<boolean> {
    const [running] = await this.deps.db
      .select({ id: sessions.id })
      .from(sessions)
      .where(eq(sessions.status, 'running'))
      .limit(1);
    return running !== undefined;
  }

  /** Sessions whose agent no live worker lists: claimed by clearing the join, so a second process finds nothing. */
  async #moveLostAgents(): Promise<string[]> {
    const redispatched: string[] = [];
    const heartbeatsRecorded =
      performance.now() - this.#databaseFailedAt > LOST_GRACE_AFTER_DB_FAILURE_MS && (await this.#heartbeatsHeard());
    const lost = !heartbeatsRecorded
      ? []
      : await this.deps.db
          .update(sessions)
          .set({ agentJoinedAt: null, agentWaitSince: sql`now()`, dispatchedAt: sql`now()` })
          .where(
            and(
              eq(sessions.status, 'running'),
              isNotNull(sessions.agentJoinedAt),
              lt(sql`coalesce(${sessions.agentSeenAt}, ${sessions.agentJoinedAt})`, secondsAgo(HEARTBEAT_TTL_SECONDS)),
            ),
          )
          .returning();
    for (const session of lost) {
      this.#log(`session ${session.id} lost its agent (no live worker lists it)`);
      if (await this.#moveOrEnd(session, await this.#wasDraining(session))) redispatched.push(session.id);
    }
    return redispatched;
  }

  /**
   * Dispatches nobody answered (no worker lists the session since, and every live one has
   * spoken since), while some worker could.
   */
  async #redispatchUnanswered(): Promise<string[]> {
    const { db } = this.deps;
    const redispatched: string[] = [];
    const dispatched = sql`coalesce(${sessions.dispatchedAt}, ${sessions.createdAt})`;
    const unanswered = await db
      .select({
        id: sessions.id,
        dispatchId: sessions.dispatchId,
        lately: sql<boolean>`${dispatched} > ${secondsAgo(ACCEPTED_JOB_ARRIVES_WITHIN_SECONDS)}`,
      })
      .from(sessions)
      .where(
        and(
          eq(sessions.status, 'running'),
          isNull(sessions.agentJoinedAt),
          lt(dispatched, secondsAgo(REDISPATCH_AFTER_SECONDS)),
          or(isNull(sessions.agentSeenAt), lt(sessions.agentSeenAt, dispatched)),
          notExists(
            db
              .select({ id: agentWorkers.id })
              .from(agentWorkers)
              .where(
                and(
                  eq(agentWorkers.agentName, this.deps.agentName),
                  gt(agentWorkers.expiresAt, sql`now()`),
                  lt(agentWorkers.seenAt, secondsAfter(dispatched, UNANSWERED_AFTER_HEARTBEAT_SECONDS)),
                ),
              ),
          ),
        ),
      );
    if (unanswered.length === 0) return redispatched;
    // These sessions are among the "started, no agent yet" the count subtracts: one free slot is enough.
    if (
      (await freeAgentSlots(db, this.deps.agentName, this.deps.settings.agentTimeoutSeconds)).free +
        unanswered.length <=
      0
    )
      return redispatched;
    for (const { id, dispatchId, lately } of unanswered) {
      if (lately && (await this.#acceptedByAWorker(id, dispatchId))) continue;
      const [claimed] = await db
        .update(sessions)
        .set({ dispatchedAt: sql`now()` })
        .where(
          and(
            eq(sessions.id, id),
            eq(sessions.status, 'running'),
            isNull(sessions.agentJoinedAt),
            or(isNull(sessions.dispatchedAt), lt(sessions.dispatchedAt, secondsAgo(REDISPATCH_AFTER_SECONDS))),
            or(
              isNull(sessions.agentSeenAt),
              lt(sessions.agentSeenAt, sql`coalesce(${sessions.dispatchedAt}, ${sessions.createdAt})`),
            ),
          ),
        )
        .returning();
      if (!claimed) continue;
      this.#log(`session ${id}: no agent answered its dispatch; dispatching it again`);
      // The old dispatch goes: a job it might still start would find a second agent there.
      await this.deps.livekit.dispatches.deleteDispatch(claimed.dispatchId, id).catch(() => undefined);
      if (await this.#dispatch(claimed)) redispatched.push(id);
    }
    return redispatched;
  }

  /** Whether LiveKit has a worker's acceptance of the session's dispatch on record (its job may still be on its way). */
  async #acceptedByAWorker(sessionId: string, dispatchId: string): Promise<boolean> {
    try {
      const dispatches = await this.deps.livekit.dispatches.listDispatch(sessionId);
      const jobs = dispatches.find((dispatch) => dispatch.id === dispatchId)?.state?.jobs ?? [];
      const accepted = jobs.some((job) => job.state?.status === JobStatus.JS_RUNNING && job.state.workerId);
      const now = performance.now();
      for (const [id, since] of this.#waitingForAcceptedJob)
        if (now - since > ACCEPTED_JOB_ARRIVES_WITHIN_SECONDS * 1000) this.#waitingForAcceptedJob.delete(id);
      if (accepted && !this.#waitingForAcceptedJob.has(sessionId)) {
        this.#waitingForAcceptedJob.set(sessionId, now);
        this.#log(
          `session ${sessionId}: a worker accepted its dispatch and has not listed it yet; waiting for its job`,
        );
      }
      return accepted;
    } catch {
      return false; // LiveKit unreachable: the heartbeats alone decide, as before.
    }
  }

  /** A job says it leaves a session that goes on, its worker stopping: the session moves now, or ends. */
  async onAgentLeaving(sessionId: string, reason: AgentLeavingReason): Promise<void> {
    const [session] = await this.deps.db
      .update(sessions)
      .set({ agentJoinedAt: null, agentWaitSince: sql`now()`, dispatchedAt: sql`now()` })
      .where(and(eq(sessions.id, sessionId), eq(sessions.status, 'running'), isNotNull(sessions.agentJoinedAt)))
      .returning();
    if (!session) return;
    this.#log(
      reason === 'worker_stopping'
        ? `session ${sessionId}: its agent's worker is stopping`
        : `session ${sessionId}: LiveKit never received its agent's tracks; a new agent takes it`,
    );
    // A job that failed to stream frees its own slot as it goes: no reason to end the session.
    await this.#moveOrEnd(session, reason === 'worker_stopping');
  }

  /**
   * Another worker takes the session (the old agents are removed first); with none free, a
   * session whose worker was stopping ends with the `service_restarting` notice, and another
   * waits for the retries and the agent timeout. True when dispatched again.
   */
  async #moveOrEnd(session: SessionRow, workerStopping: boolean): Promise<boolean> {
    await this.#removeAgents(session.id);
    if (
      workerStopping &&
      (await freeAgentSlots(this.deps.db, this.deps.agentName, this.deps.settings.agentTimeoutSeconds, session.id))
        .free <= 0
    ) {
      await this.deps.lifecycle
        .endForRestart(session.id)
        .catch((error) => this.#log(`ending ${session.id} failed: ${(error as Error).message}`));
      return false;
    }
    return this.#dispatch(session);
  }

  /** Whether the worker that last ran the session said it was stopping. */
  async #wasDraining(session: SessionRow): Promise<boolean> {
    if (!session.agentWorkerId) return false;
    const [worker] = await this.deps.db
      .select({ draining: agentWorkers.draining })
      .from(agentWorkers)
      .where(eq(agentWorkers.id, session.agentWorkerId));
    return worker?.draining ?? false;
  }

  /** Removes every agent participant (a job, an avatar service) from the session's room. */
  async #removeAgents(sessionId: string): Promise<void> {
    try {
      const participants = await this.deps.livekit.rooms.listParticipants(sessionId);
      for (const participant of participants) {
        if (participant.kind !== ParticipantInfo_Kind.AGENT) continue;
        await this.deps.livekit.rooms.removeParticipant(sessionId, participant.identity).catch(() => undefined);
      }
    } catch (error) {
      this.#log(`listing the agents of ${sessionId} failed: ${(error as Error).message}`);
    }
  }

  /**
   * A new dispatch for the session, with a new report token (an earlier job, if it still runs
   * somewhere, can no longer report) and its minutes numbered on from those already billed.
   */
  async #dispatch(session: SessionRow): Promise<boolean> {
    const { db, livekit, settings } = this.deps;
    const identity = session.identityId ? await findIdentity(db, session.accountId, session.identityId) : undefined;
    const reportToken = randomBase62(43);
    // What is left of the last paid minute, counted from when the earlier agent was last seen
    // (its worker's last heartbeat listing the session, or its job's arrival): the new job's
    // minutes begin that long after its avatar reaches the visitor.
    const paid = await paidUntil(db, session, settings.billingIntervalSeconds);
    const lostAt = Math.min(Date.now(), (session.agentSeenAt ?? new Date()).getTime());
    const paidLeftMs = paid ? Math.max(0, Math.round(paid.getTime() - lostAt)) : 0;
    const metadata = {
      ...dispatchMetadata({
        sessionId: session.id,
        reportUrl: `${this.deps.internalUrl}/internal/sessions/${session.id}/reports`,
        reportToken,
        avatarEnabled: session.avatarEnabled,
        visitorIdentity: session.visitorIdentity,
        identity,
        language: session.language,
        visualAwareness: session.visualAwareness,
        formFactor: session.formFactor,
        settings,
        assetLinks: this.deps.assetLinks,
        internalUrl: this.deps.internalUrl,
        // The new job is directed as the first was: the row keeps what the start set.
        direction: session,
        // Records on into a new part of the same recording (docs/api.md#recordings).
        recording: session,
        outcomeSchema: session.outcomeSchema ?? null,
        // What is remembered of the visitor now (a forgotten one: nothing).
        memory: await sessionMemory(db, session),
        // And has the tools and documents the start fixed (a tool deleted since is left out).
        toolbox: await sessionToolbox(db, session, this.deps.internalUrl),
        test: isTestAccount(session.accountId),
      }),
      minute_offset: session.billedMinutes,
      ...(paidLeftMs ? { paid_left_ms: paidLeftMs } : {}),
    };
    try {
      const dispatch = await livekit.dispatches.createDispatch(session.id, this.deps.agentName, {
        metadata: JSON.stringify(metadata),
      });
      await db
        .update(sessions)
        // The earlier job is done: its usage counts up to when it was last seen (usage-reports.ts).
        .set({ dispatchId: dispatch.id, reportTokenHash: hashApiKey(reportToken), ...foldUsage(new Date(lostAt)) })
        .where(and(eq(sessions.id, session.id), eq(sessions.status, 'running')));
      return true;
    } catch (error) {
      // The next tick tries again (dispatchedAt was set), until the agent timeout ends it.
      this.#log(`dispatching session ${session.id} again failed: ${(error as Error).message}`);
      return false;
    }
  }

  #log(line: string): void {
    (this.deps.log ?? ((l: string) => log.warn(l)))(line);
  }
}
