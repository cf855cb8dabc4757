CREATE TABLE "recording_parts" (
	"session_id" text NOT NULL,
	"part" text NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"chunks_received" integer DEFAULT 0 NOT NULL,
	"chunks" integer,
	"duration_ms" integer,
	"done_at" timestamp with time zone,
	CONSTRAINT "recording_parts_session_id_part_pk" PRIMARY KEY("session_id","part")
);
--> statement-breakpoint
CREATE TABLE "recordings" (
	"session_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"status" text DEFAULT 'recording' NOT NULL,
	"reason" text,
	"duration_ms" integer,
	"size_bytes" integer,
	"store" text,
	"object_key" text,
	"worked_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ready_at" timestamp with time zone,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "identities" ADD COLUMN "record_sessions" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "publishable_keys" ADD COLUMN "record_sessions" boolean;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "record" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "recording_notice" text;--> statement-breakpoint
ALTER TABLE "recording_parts" ADD CONSTRAINT "recording_parts_session_id_recordings_session_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."recordings"("session_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recordings" ADD CONSTRAINT "recordings_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recordings" ADD CONSTRAINT "recordings_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "recordings_status_idx" ON "recordings" USING btree ("status");--> statement-breakpoint
CREATE INDEX "recordings_ready_idx" ON "recordings" USING btree ("ready_at");