ALTER TABLE "console_attempts" RENAME TO "limit_attempts";--> statement-breakpoint
ALTER INDEX "console_attempts_key_idx" RENAME TO "limit_attempts_key_idx";--> statement-breakpoint
ALTER SEQUENCE "console_attempts_id_seq" RENAME TO "limit_attempts_id_seq";--> statement-breakpoint
ALTER TABLE "limit_attempts" RENAME CONSTRAINT "console_attempts_pkey" TO "limit_attempts_pkey";--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "limits" jsonb;
