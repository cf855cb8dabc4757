CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"identity_id" text,
	"pipeline_id" text,
	"avatar_enabled" boolean NOT NULL,
	"language" text NOT NULL,
	"visual_awareness" boolean NOT NULL,
	"form_factor" text,
	"dispatch_id" text NOT NULL,
	"visitor_identity" text NOT NULL,
	"report_token_hash" text NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"end_reason" text,
	"held_credits" integer DEFAULT 0 NOT NULL,
	"billed_minutes" integer DEFAULT 0 NOT NULL,
	"credits_charged" integer DEFAULT 0 NOT NULL,
	"max_duration_seconds" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"joined_at" timestamp with time zone,
	"streaming_started_at" timestamp with time zone,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "max_session_seconds" integer;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."identities"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sessions_account_created_idx" ON "sessions" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "sessions_status_idx" ON "sessions" USING btree ("status");