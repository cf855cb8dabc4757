// The JSON the console API answers with: the server's own response schemas (src/console/
// contract.ts, and the /v1 twins in src/*/contract.ts), imported as types only. Erased from
// the bundle, they keep the page in step with the server without pulling server code in.
import type { Static } from '@sinclair/typebox';
import { type Language, LANGUAGE_NAMES as SPOKEN_LANGUAGE_NAMES } from '../../contract/languages.ts';
import type * as creditContract from '../../credits/contract.ts';
import type { LedgerKind } from '../../credits/index.ts';
import type * as identityContract from '../../identities/contract.ts';
import type * as knowledgeContract from '../../knowledge/contract.ts';
import type * as publishableKeyContract from '../../publishable-keys/contract.ts';
import type * as recordingContract from '../../recordings/contract.ts';
import type * as sessionContract from '../../sessions/contract.ts';
import type * as toolContract from '../../tools/contract.ts';
import type * as visitorContract from '../../visitors/contract.ts';
import type { VoiceItem } from '../../voices/index.ts';
import type * as webhookContract from '../../webhooks/contract.ts';
import type * as consoleContract from '../contract.ts';

export type Account = Static<typeof consoleContract.ConsoleAccount>;
export type SignedIn = Static<typeof consoleContract.SignedIn>;
export type SignInState = Static<typeof consoleContract.SignInState>;
export type NewApiKey = Static<typeof consoleContract.IssuedKeyResponse>;
/** `name` is null for keys made without one. */
export type ApiKeySummary = Static<typeof consoleContract.KeySummary>;
export type { LedgerKind };
export type Credits = Static<typeof creditContract.CreditsResponse>;
export type Usage = Static<typeof creditContract.UsageResponse>;
export type Webhook = Static<typeof webhookContract.WebhookResponse>;
export type CreatedWebhook = Static<typeof webhookContract.CreatedWebhookResponse>;
export type WebhookDelivery = Static<typeof webhookContract.DeliveryResponse>;

export { LANGUAGES, type Language } from '../../contract/languages.ts';
export { WEBHOOK_EVENTS } from '../../contract/webhook-events.ts';
/** The language modes as the console labels them. */
export const LANGUAGE_NAMES: Record<Language, string> = { auto: 'Auto: follows the visitor', ...SPOKEN_LANGUAGE_NAMES };

/** `failed` is not an identity status (docs/api.md#identity-states); tolerated so a future status does not break the gallery. */
export type IdentityStatus = 'created' | 'training' | 'ready' | 'failed';

export type IdentityListItem = Static<typeof identityContract.IdentityListItem>;
export type Identity = Static<typeof identityContract.IdentityResponse>;
export type IdentityStatusResponse = Static<typeof identityContract.IdentityStatusResponse>;
export type Voice = Static<typeof VoiceItem>;
export type Session = Static<typeof sessionContract.SessionResponse>;
export type EndReason = NonNullable<Session['end_reason']>;
export type Transcript = Static<typeof sessionContract.TranscriptResponse>;
export type SessionStart = Static<typeof sessionContract.StartSessionResponse>;
/** A recorded session's file (docs/api.md#recordings). */
export type Recording = Static<typeof recordingContract.RecordingResponse>;

// Tools and documents (docs/api.md#tools, #documents).
export type { ToolType } from '../../contract/agent-tools.ts';
export type Tool = Static<typeof toolContract.ToolResponse>;
/** A webhook tool's create answer carries its signing secret, once. */
export type CreatedTool = Static<typeof toolContract.CreatedToolResponse>;
export type { DocumentStatus } from '../../knowledge/schema.ts';
export type KnowledgeDocument = Static<typeof knowledgeContract.DocumentResponse>;

// Publishable keys (docs/api.md#publishable-keys): public by design, shown in every read.
export type PublishableKey = Static<typeof publishableKeyContract.PublishableKeyResponse>;
export type PublishableKeyLimits = PublishableKey['limits'];

// Visitors (docs/api.md#visitors): each fact with its scope (null: shared by every identity).
export type Visitor = Static<typeof visitorContract.VisitorResponse>;
export type VisitorFact = Static<typeof visitorContract.VisitorFact>;
