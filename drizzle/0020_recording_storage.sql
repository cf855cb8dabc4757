CREATE TABLE "recording_storage" (
	"account_id" text PRIMARY KEY NOT NULL,
	"endpoint" text,
	"bucket" text,
	"region" text,
	"prefix" text DEFAULT '' NOT NULL,
	"access_key_id" text,
	"secret_access_key" text,
	"retention_days" integer,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "recordings" ADD COLUMN "bucket" text;--> statement-breakpoint
ALTER TABLE "recording_storage" ADD CONSTRAINT "recording_storage_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;