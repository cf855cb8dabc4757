CREATE TABLE "console_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"scope" text NOT NULL,
	"key_hash" text NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "console_attempts_key_idx" ON "console_attempts" USING btree ("scope","key_hash","at");