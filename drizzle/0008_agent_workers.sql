CREATE TABLE "agent_workers" (
	"id" text PRIMARY KEY NOT NULL,
	"agent_name" text NOT NULL,
	"capacity" integer NOT NULL,
	"running_jobs" integer NOT NULL,
	"draining" boolean DEFAULT false NOT NULL,
	"seen_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "agent_workers_name_expires_idx" ON "agent_workers" USING btree ("agent_name","expires_at");