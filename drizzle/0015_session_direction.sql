CREATE TABLE "session_orders" (
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"operation" text NOT NULL,
	"outcome" text,
	"detail" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"answered_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "session_transcripts" ADD COLUMN "ordered_by" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "context" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "greeting" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "client_control" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "idle_timeout_seconds" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "summary" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "summary_status" text DEFAULT 'none' NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "summary_detail" text;--> statement-breakpoint
ALTER TABLE "session_orders" ADD CONSTRAINT "session_orders_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "session_orders_session_idx" ON "session_orders" USING btree ("session_id","created_at");