// Cloned voices waiting to be deleted at the provider: their identity was deleted, or its voice
// replaced, while a session was still speaking with them.
import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

export const voiceReleases = pgTable('voice_releases', {
  elevenlabsVoiceId: text('elevenlabs_voice_id').primaryKey(),
  requestedAt: timestamp('requested_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});
