CREATE TABLE "session_transcripts" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"role" text NOT NULL,
	"text" text NOT NULL,
	"language" text,
	"interrupted" boolean DEFAULT false NOT NULL,
	"turn_id" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "identities" ADD COLUMN "voice" jsonb;--> statement-breakpoint
ALTER TABLE "session_transcripts" ADD CONSTRAINT "session_transcripts_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "session_transcripts_session_idx" ON "session_transcripts" USING btree ("session_id","started_at","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "session_transcripts_turn_idx" ON "session_transcripts" USING btree ("session_id","turn_id");