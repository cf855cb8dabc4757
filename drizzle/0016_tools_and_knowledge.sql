CREATE TABLE "identity_documents" (
	"identity_id" text NOT NULL,
	"document_id" text NOT NULL,
	"position" integer NOT NULL,
	CONSTRAINT "identity_documents_identity_id_document_id_pk" PRIMARY KEY("identity_id","document_id")
);
--> statement-breakpoint
CREATE TABLE "identity_tools" (
	"identity_id" text NOT NULL,
	"tool_id" text NOT NULL,
	"position" integer NOT NULL,
	CONSTRAINT "identity_tools_identity_id_tool_id_pk" PRIMARY KEY("identity_id","tool_id")
);
--> statement-breakpoint
CREATE TABLE "document_chunks" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"document_id" text NOT NULL,
	"account_id" text NOT NULL,
	"ordinal" integer NOT NULL,
	"text" text NOT NULL,
	"embedding" "bytea" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "documents" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"content_type" text NOT NULL,
	"bytes" integer NOT NULL,
	"status" text NOT NULL,
	"detail" text,
	"chunk_count" integer DEFAULT 0 NOT NULL,
	"embedding_model" text,
	"worked_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tools" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"type" text NOT NULL,
	"parameters" jsonb NOT NULL,
	"url" text,
	"timeout_ms" integer NOT NULL,
	"secret" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "session_transcripts" ADD COLUMN "tool_call" jsonb;--> statement-breakpoint
ALTER TABLE "session_transcripts" ADD COLUMN "document_ids" jsonb;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "tool_ids" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "document_ids" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "identity_documents" ADD CONSTRAINT "identity_documents_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."identities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_documents" ADD CONSTRAINT "identity_documents_document_id_documents_id_fk" FOREIGN KEY ("document_id") REFERENCES "public"."documents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_tools" ADD CONSTRAINT "identity_tools_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."identities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_tools" ADD CONSTRAINT "identity_tools_tool_id_tools_id_fk" FOREIGN KEY ("tool_id") REFERENCES "public"."tools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "document_chunks" ADD CONSTRAINT "document_chunks_document_id_documents_id_fk" FOREIGN KEY ("document_id") REFERENCES "public"."documents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "document_chunks" ADD CONSTRAINT "document_chunks_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "documents" ADD CONSTRAINT "documents_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tools" ADD CONSTRAINT "tools_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "identity_documents_document_idx" ON "identity_documents" USING btree ("document_id");--> statement-breakpoint
CREATE INDEX "identity_tools_tool_idx" ON "identity_tools" USING btree ("tool_id");--> statement-breakpoint
CREATE INDEX "document_chunks_document_idx" ON "document_chunks" USING btree ("document_id","ordinal");--> statement-breakpoint
CREATE INDEX "documents_account_created_idx" ON "documents" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "tools_account_name_idx" ON "tools" USING btree ("account_id","name");--> statement-breakpoint
CREATE INDEX "tools_account_created_idx" ON "tools" USING btree ("account_id","created_at","id");--> statement-breakpoint
-- pgvector where the database has it (PGlite's `vector` extension, a Postgres image with
-- pgvector): an embedding_vector column beside the float32 bytes, with an approximate (HNSW)
-- index for inner product (the embeddings are unit length). Elsewhere (Debian's Postgres ships
-- no pgvector) nothing is added and src/knowledge/store.ts searches the bytes exactly.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS vector;
      EXECUTE 'ALTER TABLE document_chunks ADD COLUMN embedding_vector vector(384)';
      EXECUTE 'CREATE INDEX document_chunks_embedding_idx ON document_chunks USING hnsw (embedding_vector vector_ip_ops)';
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'pgvector is available but this role cannot create it: documents are searched exactly';
    END;
  END IF;
END
$$;
