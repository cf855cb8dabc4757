// The JSON the console API answers with (src/console/contract.ts, and the /v1 twins in
// src/*/contract.ts). Server types are imported as types only: erased from the bundle, they
// keep the page in step with the server without pulling server code into the browser.
import type { KeySummary } from '../../auth/api-keys.ts';
import type { LedgerKind } from '../../credits/index.ts';

export interface Account {
  account_id: string;
  email: string;
  balance: number;
}

export interface SignedIn {
  account: Account;
  csrf_token: string;
}

export interface NewApiKey {
  key_id: string;
  api_key: string;
  name: string | null;
}

/** `name` is null for keys made without one. */
export type ApiKeySummary = KeySummary;
export type { LedgerKind };

export interface Credits {
  balance: number;
  entries: { entry_id: string; kind: LedgerKind; amount: number; reference: string; created_at: string }[];
}

export const LANGUAGES = ['auto', 'en', 'es', 'pl', 'uk'] as const;
export type Language = (typeof LANGUAGES)[number];
export const LANGUAGE_NAMES: Record<Language, string> = {
  auto: 'Auto (follows the visitor)',
  en: 'English',
  es: 'Spanish',
  pl: 'Polish',
  uk: 'Ukrainian',
};

/** `failed` is not in the spec; tolerated so a future status does not break the gallery. */
export type IdentityStatus = 'created' | 'training' | 'ready' | 'failed';

export interface IdentityListItem {
  identity_id: string;
  name: string;
  language: Language;
  status: IdentityStatus;
  image: string;
  created_at: string;
  updated_at: string;
}

export interface Identity extends IdentityListItem {
  prompt: string;
  audio: string | null;
  /** A preset's id, `default`, or null when the voice was cloned from `audio`. */
  voice_id: string | null;
  detail: string | null;
  pipeline_id: string;
}

export interface IdentityStatusResponse {
  identity_id: string;
  status: IdentityStatus;
  updated_at: string;
  detail: string | null;
}

export interface Voice {
  voice_id: string;
  name: string;
  description: string;
  gender: string;
  multilingual: boolean;
  languages: string[];
}

export type EndReason =
  | 'ended_by_api'
  | 'client_left'
  | 'no_join'
  | 'max_duration'
  | 'insufficient_credits'
  | 'room_closed'
  | 'agent_unavailable';

export interface Session {
  session_id: string;
  status: 'running' | 'ended';
  identity_id: string | null;
  avatar_enabled: boolean;
  language: Language;
  visual_awareness: boolean;
  form_factor: 'phone' | 'desktop' | null;
  end_reason: EndReason | null;
  billed_minutes: number;
  credits_charged: number;
  created_at: string;
  joined_at: string | null;
  streaming_started_at: string | null;
  ended_at: string | null;
}

export interface Transcript {
  session_id: string;
  /** The spec says `agent`; the console contract note says `assistant`: both mean the identity. */
  turns: { role: 'user' | 'agent' | 'assistant'; text: string; language: string | null; interrupted?: boolean; started_at: string; ended_at: string | null }[];
}

export interface SessionStart {
  room_name: string;
  token: string;
  rtc_url: string;
  visual_awareness: boolean;
}
