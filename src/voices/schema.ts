// Cloned voices waiting to be deleted at the provider: their identity was deleted, or its voice
// replaced, while a session was still speaking with them.
import { pgTable, text } from 'drizzle-orm/pg-core';
import { instant } from '../db/columns.ts';

export const voiceReleases = pgTable('voice_releases', {
  elevenlabsVoiceId: text('elevenlabs_voice_id').primaryKey(),
  requestedAt: instant('requested_at').notNull().defaultNow(),
});
