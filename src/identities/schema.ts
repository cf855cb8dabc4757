import { boolean, index, integer, json, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { accounts } from '../accounts/schema.ts';
import { LANGUAGES } from '../contract/languages.ts';
import { belongsTo, createdAt, instant, updatedAt } from '../db/columns.ts';
import { documents } from '../knowledge/schema.ts';
import type { StoredAudio, StoredImage } from '../media/stored.ts';
import { tools } from '../tools/schema.ts';
import type { IdentityVoice } from '../voices/voice.ts';

export const IDENTITY_STATUSES = ['created', 'training', 'ready'] as const;
export type IdentityStatus = (typeof IDENTITY_STATUSES)[number];

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
    accountId: belongsTo('account_id', () => accounts.id).notNull(),
    name: text('name').notNull(),
    prompt: text('prompt').notNull(),
    language: text('language', { enum: LANGUAGES }).notNull().default('auto'),
    pipelineId: text('pipeline_id').notNull(),
    status: text('status', { enum: IDENTITY_STATUSES }).notNull(),
    detail: text('detail'),
    image: jsonb('image').$type<StoredImage>().notNull(),
    audio: jsonb('audio').$type<StoredAudio>(),
    voice: jsonb('voice').$type<IdentityVoice>(),
    /** Its sessions are recorded unless the start says otherwise (docs/api.md#recordings). */
    recordSessions: boolean('record_sessions').notNull().default(false),
    /** The outcome its sessions fill unless the start gives another (docs/api.md#outcomes); null: none. */
    outcomeSchema: json('outcome_schema').$type<Record<string, unknown>>(),
    /** What the pipeline's training produced (e.g. face analysis), for the renderer. */
    training: jsonb('training').$type<Record<string, unknown>>(),
    pendingRetrain: jsonb('pending_retrain').$type<PendingRetrain>(),
    /**
     * While a create or retrain runs, the process doing it keeps this in the future (a lease);
     * past it, the work is orphaned and any process's recovery takes it over.
     */
    workedUntil: instant('worked_until'),
    /** Set when onboarding completes (and is charged); null rows are unfinished creates. */
    onboardedAt: instant('onboarded_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('identities_account_created_idx').on(t.accountId, t.createdAt, t.id)],
);

/** The tools an identity's agent calls (its `tool_ids`, in order). A tool deleted later drops out. */
export const identityTools = pgTable(
  'identity_tools',
  {
    identityId: belongsTo('identity_id', () => identities.id).notNull(),
    toolId: belongsTo('tool_id', () => tools.id).notNull(),
    position: integer('position').notNull(),
  },
  (t) => [primaryKey({ columns: [t.identityId, t.toolId] }), index('identity_tools_tool_idx').on(t.toolId)],
);

/** The documents an identity's agent answers from (its `document_ids`, in order). A document deleted later drops out. */
export const identityDocuments = pgTable(
  'identity_documents',
  {
    identityId: belongsTo('identity_id', () => identities.id).notNull(),
    documentId: belongsTo('document_id', () => documents.id).notNull(),
    position: integer('position').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.identityId, t.documentId] }),
    index('identity_documents_document_idx').on(t.documentId),
  ],
);
