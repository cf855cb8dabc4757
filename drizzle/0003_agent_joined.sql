ALTER TABLE "sessions" ADD COLUMN "agent_joined_at" timestamp with time zone;--> statement-breakpoint
-- Sessions already running when this migrates had their agents (or were not watched for one): not given up on.
UPDATE "sessions" SET "agent_joined_at" = "created_at" WHERE "status" = 'running';
