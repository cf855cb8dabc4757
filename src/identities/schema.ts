import { index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';

export const LANGUAGES = ['auto', 'en', 'es', 'pl', 'uk'] as const;
export type Language = (typeof LANGUAGES)[number];
export const IDENTITY_STATUSES = ['created', 'training', 'ready'] as const;
export type IdentityStatus = (typeof IDENTITY_STATUSES)[number];

/** A stored file: its key in the asset store and what we learnt decoding it. */
export interface StoredImage {
  key: string;
  contentType: string;
  width: number;
  height: number;
  /** Renditions a renderer needs, keyed by name (e.g. `render` = long side 1024 PNG). */
  variants: Record<string, { key: string; width: number; height: number }>;
}
export interface StoredAudio {
  key: string;
  contentType: string;
  durationSeconds: number;
}
/** How the offline text-to-speech imitates a voice: measured from a sample, or a preset's. */
export interface VoiceProfile {
  /** Median fundamental frequency of the speech. */
  pitchHz: number;
  /** Speaking rate. */
  wordsPerMinute: number;
}
/**
 * The identity's voice. Null on the row means the default English-only voice.
 * Cloned from the uploaded audio (`presetId` null) or a preset from GET /v1/voices.
 */
export interface IdentityVoice {
  presetId: string | null;
  /** Whether it may speak every language mode (spec §4.2: all but `en` need it). */
  multilingual: boolean;
  /** The voice at ElevenLabs, when it was cloned there or the preset maps to one. */
  elevenlabsVoiceId: string | null;
  /** What the offline TTS uses. */
  profile: VoiceProfile;
}
/** Uploads of a retrain that has been accepted but not yet trained (text fields apply at once). */
export interface PendingRetrain {
  image?: { key: string; contentType: string };
  audio?: StoredAudio;
  /** The voice the retrain's audio was cloned into (or a preset chosen with it). */
  voice?: IdentityVoice | null;
  requestedAt: string;
}

export const identities = pgTable(
  'identities',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    prompt: text('prompt').notNull(),
    language: text('language', { enum: LANGUAGES }).notNull().default('auto'),
    pipelineId: text('pipeline_id').notNull(),
    status: text('status', { enum: IDENTITY_STATUSES }).notNull(),
    detail: text('detail'),
    image: jsonb('image').$type<StoredImage>().notNull(),
    audio: jsonb('audio').$type<StoredAudio>(),
    voice: jsonb('voice').$type<IdentityVoice>(),
    /** What the pipeline's training produced (e.g. face analysis), for the renderer. */
    training: jsonb('training').$type<Record<string, unknown>>(),
    pendingRetrain: jsonb('pending_retrain').$type<PendingRetrain>(),
    /** Set when onboarding completes (and is charged); null rows are unfinished creates. */
    onboardedAt: timestamp('onboarded_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('identities_account_created_idx').on(t.accountId, t.createdAt, t.id)],
);
