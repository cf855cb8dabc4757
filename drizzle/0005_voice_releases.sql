CREATE TABLE "voice_releases" (
	"elevenlabs_voice_id" text PRIMARY KEY NOT NULL,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "elevenlabs_voice_id" text;--> statement-breakpoint
CREATE INDEX "sessions_voice_idx" ON "sessions" USING btree ("elevenlabs_voice_id");--> statement-breakpoint
-- Sessions already running when this migrates speak with their identity's cloned voice.
UPDATE "sessions" SET "elevenlabs_voice_id" = "identities"."voice"->>'elevenlabsVoiceId' FROM "identities" WHERE "sessions"."identity_id" = "identities"."id" AND "sessions"."status" = 'running' AND "identities"."voice" IS NOT NULL AND "identities"."voice"->>'presetId' IS NULL;
