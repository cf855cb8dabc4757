// POST /v1/sessions/start (docs/api.md#sessions-start), checked in this order: the body, identity →
// state → language and voice → tools and documents → the account's limits → a free agent and the fair share
// (admission) → credits (early) → room → dispatch → token → then, in one transaction with the
// account locked, the limits and admission again, the credit hold and the row. When anything fails, nothing is left behind:
// the room is deleted, and the hold and the row roll back together.

import { eq } from 'drizzle-orm';
import { isTestAccount, liveAccountIdOf } from '../accounts/index.ts';
import { accounts } from '../accounts/schema.ts';
import type { AssetLinks } from '../assets/index.ts';
import { hashApiKey } from '../auth/index.ts';
import type { SessionSettings } from '../config.ts';
import { RECORDING_METADATA_KEY, type SessionRoomMetadata } from '../contract/index.ts';
import { InsufficientCredits } from '../credits/index.ts';
import { newId, randomBase62 } from '../db/ids.ts';
import type { Database } from '../db/index.ts';
import { ApiError } from '../http/errors.ts';
import { type AccountLimits, lockAccountLimits, readAccountLimits } from '../limits/index.ts';
import type { LivekitConnection } from '../livekit/index.ts';
import { log } from '../logging/index.ts';
import { sessionsStarted } from '../metrics/index.ts';
import { recordings } from '../recordings/schema.ts';
import { visitorStarted } from '../visitors/index.ts';
import { writeEvent } from '../webhooks/index.ts';
import { admitSession } from '../workers/index.ts';
import type { SessionBilling } from './billing.ts';
import { dispatchMetadata } from './dispatch.ts';
import { sessions } from './schema.ts';
import { checkPublishableKeyLimits, checkSessionLimits, type PublishableStart } from './start-limits.ts';
import { planSession, type SessionPlan, type StartRequest } from './start-plan.ts';
import { sessionToolbox } from './toolbox.ts';

export interface StartDeps {
  db: Database;
  billing: SessionBilling;
  livekit: LivekitConnection;
  settings: SessionSettings;
  agentName: string;
  /** Signed links to the identity's files, for the job to fetch. */
  assetLinks: AssetLinks;
  /** Where agent jobs reach this control plane. */
  internalUrl: string;
  limits: AccountLimits;
}

/**
 * Starts a session: its plan (start-plan.ts), the early refusals, LiveKit's room, the agent's
 * dispatch and the visitor's token, then the row with its credit hold. `rtcUrl`: where this
 * client joins the room (the service's LIVEKIT_PUBLIC_URL, or wss on the host it used:
 * src/http/client-urls.ts). `website`: a start made with a publishable key (src/embed/), under
 * that key's own limits too.
 */
export async function startSession(
  deps: StartDeps,
  accountId: string,
  request: StartRequest,
  rtcUrl = deps.livekit.publicUrl,
  website?: PublishableStart,
) {
  const plan = await planSession(deps.db, deps.settings, accountId, request, website);
  await refuseEarly(deps, accountId, plan, website);
  const sessionId = newId('ses');
  const visitorIdentity = `visitor_${randomBase62(16)}`;
  const reportToken = randomBase62(43);
  const toolbox = await sessionToolbox(
    deps.db,
    { id: sessionId, accountId, toolIds: plan.attached.toolIds, documentIds: plan.attached.documentIds },
    deps.internalUrl,
  );
  let roomCreated = false;
  try {
    await openRoom(deps, sessionId, plan);
    roomCreated = true;
    const dispatch = await deps.livekit.dispatches.createDispatch(sessionId, deps.agentName, {
      metadata: JSON.stringify(
        dispatchMetadata({
          sessionId,
          reportUrl: `${deps.internalUrl}/internal/sessions/${sessionId}/reports`,
          reportToken,
          visitorIdentity,
          settings: deps.settings,
          assetLinks: deps.assetLinks,
          internalUrl: deps.internalUrl,
          toolbox,
          test: isTestAccount(accountId),
          ...plan,
        }),
      ),
    });
    const token = await deps.livekit.mintToken({
      room: sessionId,
      identity: visitorIdentity,
      ttlSeconds: deps.settings.tokenTtlSeconds,
    });
    const row = await recordSession(deps, accountId, plan, website, {
      id: sessionId,
      dispatchId: dispatch.id,
      visitorIdentity,
      reportTokenHash: hashApiKey(reportToken),
    });
    sessionsStarted.inc({ avatar: String(plan.avatarEnabled) });
    log.info(
      { session_id: sessionId, account_id: accountId, identity_id: plan.identity?.id, avatar: plan.avatarEnabled },
      'session started',
    );
    return {
      room_name: sessionId,
      token,
      rtc_url: rtcUrl,
      dispatch_id: dispatch.id,
      user: { id: accountId },
      created_at: row.createdAt.toISOString(),
      visual_awareness: plan.visualAwareness,
      record: plan.recording.record,
    };
  } catch (error) {
    if (roomCreated) await deps.livekit.rooms.deleteRoom(sessionId).catch(() => {});
    if (error instanceof ApiError) throw error;
    if (error instanceof InsufficientCredits)
      throw insufficientCredits(deps.billing.minutePrice(plan.recording.record), accountId);
    log.error({ err: error, session_id: sessionId, account_id: accountId }, 'starting a session failed');
    throw new ApiError(500, 'The session could not be started; retry shortly');
  }
}

/**
 * Early refusals, before any LiveKit work (recordSession's transaction decides): the account's
 * limits, the key's, a free agent (admission), its credits for an avatar's first minute.
 */
async function refuseEarly(
  deps: StartDeps,
  accountId: string,
  plan: SessionPlan,
  website: PublishableStart | undefined,
): Promise<void> {
  const { db, settings, billing } = deps;
  await checkSessionLimits(db, accountId, await readAccountLimits(db, accountId, deps.limits));
  if (website) await checkPublishableKeyLimits(db, website);
  if (settings.admission === 'workers') await admitSession(db, accountId, deps.agentName, settings);
  if (plan.avatarEnabled && !(await billing.canHold(accountId, plan.recording.record)))
    throw insufficientCredits(billing.minutePrice(plan.recording.record), accountId);
}

/** The session's LiveKit room, its metadata set before anyone joins. */
async function openRoom(deps: StartDeps, sessionId: string, plan: SessionPlan): Promise<void> {
  const { settings } = deps;
  await deps.livekit.rooms.createRoom({
    name: sessionId,
    // LiveKit counts a room with only the agent as empty: leave the no-join decision to
    // our sweep (it records the reason), with LiveKit's timeout as the backstop.
    emptyTimeout: settings.joinTimeoutSeconds + 30,
    // Once the visitor left, the room waits for them as the session does (SESSION_REJOIN_SECONDS),
    // and a little longer: our sweep ends the session, LiveKit's timeout is the backstop.
    departureTimeout: settings.rejoinSeconds + 10,
    maxParticipants: 8,
    metadata: JSON.stringify({
      session_id: sessionId,
      avatar_enabled: plan.avatarEnabled,
      language: plan.language,
      form_factor: plan.formFactor,
      // Set before anyone joins: the visitor's app shows the recording mark from the start.
      ...(plan.recording.record && { [RECORDING_METADATA_KEY]: true }),
    } satisfies SessionRoomMetadata),
  });
}

/**
 * The row, in one transaction with the account locked: the limits and admission again
 * (parallel starts passed the early checks together), the credit hold, the recording's row,
 * the visitor's visit and the `session.started` event.
 */
async function recordSession(
  deps: StartDeps,
  accountId: string,
  plan: SessionPlan,
  website: PublishableStart | undefined,
  started: { id: string; dispatchId: string; visitorIdentity: string; reportTokenHash: string },
) {
  const { db, settings } = deps;
  const { identity, avatarEnabled, recording, visitorId } = plan;
  // A test session's maximum is bounded by its live account's too.
  const [account] = await db
    .select({ maxSessionSeconds: accounts.maxSessionSeconds })
    .from(accounts)
    .where(eq(accounts.id, liveAccountIdOf(accountId)));
  return db.transaction(async (tx) => {
    await checkSessionLimits(tx, accountId, await lockAccountLimits(tx, accountId, deps.limits));
    // The account's lock above orders this key's starts too (a key is one account's).
    if (website) await checkPublishableKeyLimits(tx, website);
    // The fair share again, with this account's other starts settled (cluster-wide: the
    // slots and sessions are the database's).
    if (settings.admission === 'workers') await admitSession(tx, accountId, deps.agentName, settings);
    const heldCredits = avatarEnabled ? await deps.billing.hold(tx, accountId, started.id, recording.record) : 0;
    const [inserted] = await tx
      .insert(sessions)
      .values({
        ...started,
        accountId,
        identityId: identity?.id ?? null,
        pipelineId: identity?.pipelineId ?? null,
        elevenlabsVoiceId: identity?.voice?.presetId === null ? identity.voice.elevenlabsVoiceId : null,
        avatarEnabled,
        language: plan.language,
        visualAwareness: plan.visualAwareness,
        formFactor: plan.formFactor,
        ...plan.direction,
        ...recording,
        outcomeSchema: plan.outcomeSchema,
        visitorId,
        memoryScope: plan.memoryScope,
        toolIds: plan.attached.toolIds,
        documentIds: plan.attached.documentIds,
        heldCredits,
        maxDurationSeconds: maxDurationOf(accountId, account?.maxSessionSeconds ?? null, settings),
        agentWaitSince: new Date(),
        dispatchedAt: new Date(),
        publishableKeyId: website?.publishableKeyId ?? null,
        visitorAddressHash: website?.visitorAddressHash ?? null,
      })
      .returning();
    if (recording.record) await tx.insert(recordings).values({ sessionId: started.id, accountId });
    if (visitorId !== null) await visitorStarted(tx, accountId, visitorId);
    await writeEvent(tx, accountId, 'session.started', {
      session_id: started.id,
      identity_id: identity?.id ?? null,
      avatar_enabled: avatarEnabled,
      language: plan.language,
      publishable_key_id: website?.publishableKeyId ?? null,
      created_at: inserted!.createdAt.toISOString(),
    });
    return inserted!;
  });
}

/** The account's own maximum, else the service's; a test session's is short (docs/api.md#test-mode). */
export function maxDurationOf(
  accountId: string,
  accountMaximum: number | null,
  settings: Pick<SessionSettings, 'maxDurationSeconds' | 'testMaxDurationSeconds'>,
): number {
  const maximum = accountMaximum ?? settings.maxDurationSeconds;
  return isTestAccount(accountId) ? Math.min(maximum, settings.testMaxDurationSeconds) : maximum;
}

function insufficientCredits(perMinute: number, accountId: string): ApiError {
  if (isTestAccount(accountId))
    return new ApiError(
      402,
      `Insufficient credits: a test avatar session is free, but starts only while the live account could pay a live one's first minute (${perMinute} credits)`,
    );
  return new ApiError(402, `Insufficient credits: an avatar session needs ${perMinute} credits for its first minute`);
}
