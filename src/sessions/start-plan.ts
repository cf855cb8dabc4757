// What a start asks for (docs/api.md#sessions-start), checked and completed before anything is
// created: the body's own rules (a 422 before anything is looked up), then the identity and its
// state, the language and its voice, the recording, the outcome, the visitor's memory, the tools
// and documents. The result is everything the session will be; start.ts creates it.
import type { SessionSettings } from '../config.ts';
import type { FormFactor, Language, MemoryScope } from '../contract/index.ts';
import type { Database } from '../db/index.ts';
import { findOwned } from '../db/owned.ts';
import { ApiError, invalid } from '../http/errors.ts';
import { CONTROL_OR_REPLACEMENT, type IdentityRow, identityVisible } from '../identities/index.ts';
import { identities } from '../identities/schema.ts';
import { outcomeSchemaProblems } from '../outcomes/index.ts';
import { sessionMemory } from '../visitors/index.ts';
import type { SessionDirection, SessionRecording } from './dispatch.ts';
import type { PublishableStart } from './start-limits.ts';
import { sessionAttachments } from './toolbox.ts';

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

/** A start checked and completed: what the session will be. */
export interface SessionPlan {
  identity: IdentityRow | undefined;
  avatarEnabled: boolean;
  language: Language;
  visualAwareness: boolean;
  formFactor: FormFactor | null;
  direction: SessionDirection;
  recording: SessionRecording;
  outcomeSchema: Record<string, unknown> | null;
  visitorId: string | null;
  memoryScope: MemoryScope | null;
  /** What is remembered of the visitor as the session starts (one ending meanwhile adds to it after). */
  memory: Awaited<ReturnType<typeof sessionMemory>>;
  /** Fixed for the session now: a list changed on the identity later is the next session's. */
  attached: Awaited<ReturnType<typeof sessionAttachments>>;
}

/** The start's plan, or the ApiError (422, 404, 409) that refuses it. */
export async function planSession(
  db: Database,
  settings: SessionSettings,
  accountId: string,
  request: StartRequest,
  website?: PublishableStart,
): Promise<SessionPlan> {
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
  const identity = await readyIdentity(db, accountId, request.identity_id);
  const avatarEnabled = identity ? request.avatar_enabled !== false : request.avatar_enabled === true;
  if (avatarEnabled && !identity) {
    throw invalid(
      ['body', 'avatar_enabled'],
      'avatar_enabled needs an identity_id: the avatar is an identity’s face',
      'identity_required',
    );
  }
  const language = sessionLanguage(request, identity);
  const visitorId = request.visitor_id ?? null;
  const memoryScope = visitorId !== null && request.memory !== false ? (request.memory_scope ?? 'identity') : null;
  return {
    identity,
    avatarEnabled,
    language,
    visualAwareness: request.visual_awareness ?? Boolean(identity),
    formFactor: request.form_factor ?? null,
    direction,
    recording: sessionRecording(request, identity, website),
    outcomeSchema: request.outcome_schema ?? identity?.outcomeSchema ?? null,
    visitorId,
    memoryScope,
    memory: await sessionMemory(db, { accountId, visitorId, memoryScope, identityId: identity?.id ?? null }),
    attached: await sessionAttachments(db, accountId, identity?.id, request),
  };
}

/** The account's identity, which must be ready (404 when it is not the account's, 409 while it trains). */
async function readyIdentity(
  db: Database,
  accountId: string,
  identityId: string | undefined,
): Promise<IdentityRow | undefined> {
  if (identityId === undefined) return undefined;
  const identity = await findOwned(db, identities, accountId, identityId, 'Identity', identityVisible);
  if (identity.status !== 'ready')
    throw new ApiError(409, `Identity is ${identity.status}; a session needs a ready identity (poll its status)`);
  return identity;
}

/** Rule 1: the request's, then the identity's stored language, then English; other than English needs a multilingual voice. */
function sessionLanguage(request: StartRequest, identity: IdentityRow | undefined): Language {
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
  return language;
}

/** A voice that can speak every language mode: cloned from uploaded audio, or a multilingual preset. */
export function hasMultilingualVoice(identity: IdentityRow | undefined): boolean {
  return identity?.voice?.multilingual === true;
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
