CREATE TABLE "publishable_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text,
	"key" text NOT NULL,
	"allowed_origins" jsonb NOT NULL,
	"identity_ids" jsonb NOT NULL,
	"limits" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "publishable_keys_key_unique" UNIQUE("key")
);
--> statement-breakpoint
ALTER TABLE "accounts" ALTER COLUMN "email" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "test_of" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "publishable_key_id" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "visitor_address_hash" text;--> statement-breakpoint
ALTER TABLE "publishable_keys" ADD CONSTRAINT "publishable_keys_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "publishable_keys_account_idx" ON "publishable_keys" USING btree ("account_id","created_at","id");--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_test_of_accounts_id_fk" FOREIGN KEY ("test_of") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_publishable_key_id_publishable_keys_id_fk" FOREIGN KEY ("publishable_key_id") REFERENCES "public"."publishable_keys"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sessions_publishable_key_idx" ON "sessions" USING btree ("publishable_key_id","created_at");--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_test_of_unique" UNIQUE("test_of");