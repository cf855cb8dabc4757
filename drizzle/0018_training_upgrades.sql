CREATE TABLE "training_upgrades" (
	"identity_id" text PRIMARY KEY NOT NULL,
	"worked_until" timestamp with time zone,
	"prefix" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"next_attempt_at" timestamp with time zone,
	"retired_keys" jsonb,
	"retire_after" timestamp with time zone,
	"upgraded_to_version" integer,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "training_upgrades" ADD CONSTRAINT "training_upgrades_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."identities"("id") ON DELETE cascade ON UPDATE no action;