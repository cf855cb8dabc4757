ALTER TABLE "identities" ADD COLUMN "outcome_schema" json;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "outcome_schema" json;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "outcome" json;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "outcome_status" text DEFAULT 'none' NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "outcome_detail" text;