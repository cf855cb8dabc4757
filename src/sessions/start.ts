// POST /v1/sessions/start (docs/api.md#sessions-start), checked in this order: identity →
// state → language and voice → tools and documents → the account's limits → a free agent and the fair share
// (admission) → credits (early) → room → dispatch → token → then, in one transaction with the
// account locked, the limits and admission again, the credit hold and the row. When anything fails, nothing is left behind:
// the room is deleted, and the hold and the row roll back together.

import { eq } from 'drizzle-orm';
import { accounts } from '../accounts/schema.ts';
import { isTestAccount, liveAccountIdOf } from '../accounts/test-mode.ts';
import type { AssetLinks } from '../assets/links.ts';
import { hashApiKey } from '../auth/api-keys.ts';
import type { SessionSettings } from '../config.ts';
import {
  type FormFactor,
  type Language,
  type MemoryScope,
  RECORDING_METADATA_KEY,
  type SessionRoomMetadata,
} from '../contract/index.ts';
import { InsufficientCredits } from '../credits/ledger.ts';
import { newId, randomBase62 } from '../db/ids.ts';
import type { Database } from '../db/index.ts';
import { ApiError, invalid, notFound } from '../http/errors.ts';
import { findIdentity, type IdentityRow } from '../identities/queries.ts';
import { CONTROL_OR_REPLACEMENT } from '../identities/validation.ts';
import { type AccountLimits, lockAccountLimits, readAccountLimits } from '../limits/index.ts';
import type { LivekitConnection } from '../livekit/connection.ts';
import { log } from '../logging/index.ts';
import { sessionsStarted } from '../metrics/index.ts';
import { outcomeSchemaProblems } from '../outcomes/index.ts';
import { recordings } from '../recordings/schema.ts';
import { sessionMemory, visitorStarted } from '../visitors/index.ts';
import { writeEvent } from '../webhooks/index.ts';
import { admitSession } from '../workers/admission.ts';
import type { SessionBilling } from './billing.ts';
import { dispatchMetadata, type SessionDirection, type SessionRecording } from './dispatch.ts';
import { checkPublishableKeyLimits, checkSessionLimits, type PublishableStart } from './limits.ts';
import { sessions } from './schema.ts';
import { sessionAttachments, sessionToolbox } from './toolbox.ts';

export interface StartRequest {
  identity_id?: string;
  avatar_enabled?: boolean;
  language?: Language;
  visual_awareness?: boolean;
  form_factor?: FormFactor;
  context?: string;
  greeting?: string;
  client_control?: boolean;
  idle_timeout_seconds?: number;
  /** Default: the publishable key's `record_sessions`, else the identity's. */
  record?: boolean;
  recording_notice?: string;
  /** Default: the identity's. */
  outcome_schema?: Record<string, unknown>;
  /** The customer's id for the person (docs/api.md#visitors); an embed's comes from its visitor token. */
  visitor_id?: string;
  /** Default true: with a visitor, the session reads and adds to what is remembered of them. */
  memory?: boolean;
  /** Default `identity`. */
  memory_scope?: MemoryScope;
  /** Instead of the identity's, for this session. */
  tool_ids?: string[];
  document_ids?: string[];
}

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

/** A voice that can speak every language mode: cloned from uploaded audio, or a multilingual preset. */
export function hasMultilingualVoice(identity: IdentityRow | undefined): boolean {
  return identity?.voice?.multilingual === true;
}

/** `rtcUrl`: where this client joins the room (the service's LIVEKIT_PUBLIC_URL, or wss on the host it used: src/http/client-addresses.ts). */
/** `website`: a start made with a publishable key (src/embed/), under that key's own limits too. */
export async function startSession(
  deps: StartDeps,
  accountId: string,
  request: StartRequest,
  rtcUrl = deps.livekit.publicUrl,
  website?: PublishableStart,
) {
  const { db, settings } = deps;
  // The body's own rules first: a 422 before anything is looked up.
  const direction = sessionDirection(request, settings);
  if (request.outcome_schema !== undefined) {
    const problems = outcomeSchemaProblems(request.outcome_schema, ['body', 'outcome_schema']);
    if (problems.length > 0) throw new ApiError(422, problems);
  }
  if (request.visitor_id === undefined && request.memory_scope !== undefined)
    throw invalid(
      ['body', 'memory_scope'],
      "memory_scope says whose memory of a visitor the session uses: send the visitor's visitor_id too",
      'visitor_required',
    );
  let identity: IdentityRow | undefined;
  if (request.identity_id !== undefined) {
    identity = await findIdentity(db, accountId, request.identity_id);
    if (!identity) throw notFound('Identity');
    if (identity.status !== 'ready') {
      throw new ApiError(409, `Identity is ${identity.status}; a session needs a ready identity (poll its status)`);
    }
  }
  const avatarEnabled = identity ? request.avatar_enabled !== false : request.avatar_enabled === true;
  if (avatarEnabled && !identity) {
    throw invalid(
      ['body', 'avatar_enabled'],
      'avatar_enabled needs an identity_id: the avatar is an identity’s face',
      'identity_required',
    );
  }
  // Rule 1: request, then the identity's stored language, then English.
  const language: Language = request.language ?? identity?.language ?? 'en';
  if (language !== 'en' && !hasMultilingualVoice(identity)) {
    throw invalid(
      ['body', 'language'],
      identity
        ? `Language mode "${language}" needs a multilingual voice, and this identity's voice speaks English only: give the identity a multilingual preset voice (voice_id, GET /v1/voices) or a voice sample (audio), or start with "language": "en"`
        : `Language mode "${language}" needs an identity with a multilingual voice; send identity_id`,
      'multilingual_voice_required',
    );
  }
  const visualAwareness = request.visual_awareness ?? Boolean(identity);
  const recording = sessionRecording(request, identity, website);
  const outcomeSchema = request.outcome_schema ?? identity?.outcomeSchema ?? null;
  const visitorId = request.visitor_id ?? null;
  const memoryScope = visitorId !== null && request.memory !== false ? (request.memory_scope ?? 'identity') : null;
  // What is remembered of the visitor as the session starts (one ending meanwhile adds to it after).
  const memory = await sessionMemory(db, { accountId, visitorId, memoryScope, identityId: identity?.id ?? null });
  // Fixed for the session now: a list changed on the identity later is the next session's.
  const attached = await sessionAttachments(db, accountId, identity?.id, request);

  // Early refusals, before any LiveKit work (the transaction below decides): the account's
  // limits, a free agent (admission), its credits for an avatar's first minute.
  await checkSessionLimits(db, accountId, await readAccountLimits(db, accountId, deps.limits));
  if (website) await checkPublishableKeyLimits(db, website);
  if (settings.admission === 'workers') await admitSession(db, accountId, deps.agentName, settings);
  if (avatarEnabled && !(await deps.billing.canHold(accountId, recording.record)))
    throw insufficientCredits(deps.billing.minutePrice(recording.record), accountId);

  const sessionId = newId('ses');
  const visitorIdentity = `visitor_${randomBase62(16)}`;
  const reportToken = randomBase62(43);
  // A test session's maximum is bounded by its live account's too.
  const [account] = await db
    .select({ maxSessionSeconds: accounts.maxSessionSeconds })
    .from(accounts)
    .where(eq(accounts.id, liveAccountIdOf(accountId)));
  const toolbox = await sessionToolbox(
    db,
    { id: sessionId, accountId, toolIds: attached.toolIds, documentIds: attached.documentIds },
    deps.internalUrl,
  );

  const livekit = deps.livekit;
  let roomCreated = false;
  try {
    await livekit.rooms.createRoom({
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
        avatar_enabled: avatarEnabled,
        language,
        form_factor: request.form_factor ?? null,
        // Set before anyone joins: the visitor's app shows the recording mark from the start.
        ...(recording.record && { [RECORDING_METADATA_KEY]: true }),
      } satisfies SessionRoomMetadata),
    });
    roomCreated = true;
    const metadata = dispatchMetadata({
      sessionId,
      reportUrl: `${deps.internalUrl}/internal/sessions/${sessionId}/reports`,
      reportToken,
      avatarEnabled,
      visitorIdentity,
      identity,
      language,
      visualAwareness,
      formFactor: request.form_factor ?? null,
      settings,
      assetLinks: deps.assetLinks,
      internalUrl: deps.internalUrl,
      direction,
      recording,
      outcomeSchema,
      memory,
      toolbox,
      test: isTestAccount(accountId),
    });
    const dispatch = await livekit.dispatches.createDispatch(sessionId, deps.agentName, {
      metadata: JSON.stringify(metadata),
    });
    const token = await livekit.mintToken({
      room: sessionId,
      identity: visitorIdentity,
      ttlSeconds: settings.tokenTtlSeconds,
    });
    // The limits again (parallel starts passed the early check together), the hold and the
    // row: one transaction, one request at a time per account.
    const row = await db.transaction(async (tx) => {
      await checkSessionLimits(tx, accountId, await lockAccountLimits(tx, accountId, deps.limits));
      // The account's lock above orders this key's starts too (a key is one account's).
      if (website) await checkPublishableKeyLimits(tx, website);
      // The fair share again, with this account's other starts settled (cluster-wide: the
      // slots and sessions are the database's).
      if (settings.admission === 'workers') await admitSession(tx, accountId, deps.agentName, settings);
      const heldCredits = avatarEnabled ? await deps.billing.hold(tx, accountId, sessionId, recording.record) : 0;
      const [inserted] = await tx
        .insert(sessions)
        .values({
          id: sessionId,
          accountId,
          identityId: identity?.id ?? null,
          pipelineId: identity?.pipelineId ?? null,
          elevenlabsVoiceId: identity?.voice?.presetId === null ? identity.voice.elevenlabsVoiceId : null,
          avatarEnabled,
          language,
          visualAwareness,
          formFactor: request.form_factor ?? null,
          ...direction,
          ...recording,
          outcomeSchema,
          visitorId,
          memoryScope,
          toolIds: attached.toolIds,
          documentIds: attached.documentIds,
          dispatchId: dispatch.id,
          visitorIdentity,
          reportTokenHash: hashApiKey(reportToken),
          heldCredits,
          maxDurationSeconds: maxDurationOf(accountId, account?.maxSessionSeconds ?? null, settings),
          agentWaitSince: new Date(),
          dispatchedAt: new Date(),
          publishableKeyId: website?.publishableKeyId ?? null,
          visitorAddressHash: website?.visitorAddressHash ?? null,
        })
        .returning();
      if (recording.record) await tx.insert(recordings).values({ sessionId, accountId });
      if (visitorId !== null) await visitorStarted(tx, accountId, visitorId);
      await writeEvent(tx, accountId, 'session.started', {
        session_id: sessionId,
        identity_id: identity?.id ?? null,
        avatar_enabled: avatarEnabled,
        language,
        publishable_key_id: website?.publishableKeyId ?? null,
        created_at: inserted!.createdAt.toISOString(),
      });
      return inserted!;
    });
    sessionsStarted.inc({ avatar: String(avatarEnabled) });
    log.info(
      { session_id: sessionId, account_id: accountId, identity_id: identity?.id, avatar: avatarEnabled },
      'session started',
    );
    return {
      room_name: sessionId,
      token,
      rtc_url: rtcUrl,
      dispatch_id: dispatch.id,
      user: { id: accountId },
      created_at: row.createdAt.toISOString(),
      visual_awareness: visualAwareness,
      record: recording.record,
    };
  } catch (error) {
    if (roomCreated) await livekit.rooms.deleteRoom(sessionId).catch(() => {});
    if (error instanceof ApiError) throw error;
    if (error instanceof InsufficientCredits)
      throw insufficientCredits(deps.billing.minutePrice(recording.record), accountId);
    log.error({ err: error, session_id: sessionId, account_id: accountId }, 'starting a session failed');
    throw new ApiError(500, 'The session could not be started; retry shortly');
  }
}

/**
 * The start's directions as kept (docs/decisions.md#session-direction): surrounding whitespace
 * dropped from the context (blank: none) and the greeting (blank: silent, as ""); the idle
 * timeout from the configuration when the start sets none. Text with control characters (but
 * tab and line breaks) is 422, as in an identity's prompt.
 */
export function sessionDirection(
  request: StartRequest,
  settings: Pick<SessionSettings, 'idleTimeoutSeconds'>,
): SessionDirection {
  for (const field of ['context', 'greeting'] as const) {
    if (CONTROL_OR_REPLACEMENT.test(request[field] ?? ''))
      throw invalid(
        ['body', field],
        `${field} must be text without control characters (tab and line breaks are fine)`,
        'string_invalid_characters',
      );
  }
  return {
    context: request.context?.trim() || null,
    greeting: request.greeting?.trim() ?? null,
    clientControl: request.client_control ?? false,
    idleTimeoutSeconds: request.idle_timeout_seconds ?? settings.idleTimeoutSeconds,
  };
}

/**
 * Whether the session is recorded (docs/api.md#recordings): the start's `record`, else its
 * publishable key's choice, else the identity's `record_sessions`. A notice is for a recorded
 * session only, and text as the greeting is.
 */
export function sessionRecording(
  request: StartRequest,
  identity: Pick<IdentityRow, 'recordSessions'> | undefined,
  website: Pick<PublishableStart, 'recordSessions'> | undefined,
): SessionRecording {
  const record = request.record ?? website?.recordSessions ?? identity?.recordSessions ?? false;
  const notice = request.recording_notice?.trim() || null;
  if (notice !== null && CONTROL_OR_REPLACEMENT.test(notice))
    throw invalid(
      ['body', 'recording_notice'],
      'recording_notice must be text without control characters (tab and line breaks are fine)',
      'string_invalid_characters',
    );
  if (notice !== null && !record)
    throw invalid(
      ['body', 'recording_notice'],
      'recording_notice is said in a recorded session only: send "record": true (or record the identity\'s sessions)',
      'recording_required',
    );
  return { record, recordingNotice: notice };
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
