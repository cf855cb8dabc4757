CREATE TABLE "visitors" (
	"id" text NOT NULL,
	"account_id" text NOT NULL,
	"facts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_session_at" timestamp with time zone,
	CONSTRAINT "visitors_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "visitor_id" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "memory_scope" text;--> statement-breakpoint
ALTER TABLE "visitors" ADD CONSTRAINT "visitors_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "visitors_account_created_idx" ON "visitors" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "visitors_last_session_idx" ON "visitors" USING btree ("last_session_at");--> statement-breakpoint
CREATE INDEX "sessions_visitor_idx" ON "sessions" USING btree ("account_id","visitor_id");