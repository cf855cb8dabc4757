// One drizzle database over either engine: PGlite embedded under DATA_DIR when no
// DATABASE_URL is set, Postgres otherwise. Same schema, same migrations.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import * as schema from './schema.ts';

export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;
/** A transaction handle; queries that must join a caller's transaction take `Database | Transaction`. */
export type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];
export type Queryable = Database | Transaction;

export interface DatabaseHandle {
  db: Database;
  engine: 'pglite' | 'postgres';
  ping(): Promise<void>;
  close(): Promise<void>;
}

const migrationsFolder = resolve(import.meta.dir, '../../drizzle');
/** pg_advisory_lock key of the migrations: any constant of our own ('lkns' in ASCII). */
const MIGRATION_LOCK = 0x6c6b6e73;

export interface DatabaseOptions {
  databaseUrl?: string;
  /** Folder of the embedded database; `memory://` keeps it in memory (tests). */
  pgliteDir?: string;
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  let handle: DatabaseHandle;
  if (options.databaseUrl) {
    const client = postgres(options.databaseUrl, { max: 10, onnotice: () => {} });
    const db = drizzlePostgres(client, { schema }) as unknown as Database;
    await migrateOnce(client, options.databaseUrl);
    handle = {
      db,
      engine: 'postgres',
      ping: async () => void (await db.execute(sql`select 1`)),
      close: () => client.end({ timeout: 5 }),
    };
  } else {
    const dir = options.pgliteDir ?? 'memory://';
    if (!dir.startsWith('memory://')) mkdirSync(dir, { recursive: true });
    // pgvector, for the documents' search (src/knowledge/store.ts). PGlite is patched
    // (src/db/patches): it copied its ~350 type parsers into a new object for every result that
    // brings parsers of its own, as drizzle's every query does, ~0.45 ms of CPU each, three times
    // the query; now the query's parsers sit over its own. Test: test/db/pglite-parsers.test.ts.
    const client = new PGlite(dir, { extensions: { vector } });
    const db = drizzlePglite(client, { schema }) as unknown as Database;
    await withReason(() => migratePglite(drizzlePglite(client), { migrationsFolder }));
    handle = {
      db,
      engine: 'pglite',
      ping: async () => void (await db.execute(sql`select 1`)),
      close: () => client.close(),
    };
  }
  return handle;
}

/**
 * Migrations under a session-level advisory lock: processes started at once on one Postgres
 * (API replicas) take turns, and the ones after the first find nothing left to do. Without it
 * both would try to create the same tables and one would fail its start.
 */
async function migrateOnce(client: postgres.Sql, databaseUrl: string): Promise<void> {
  const lock = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await lock`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await withReason(() => migratePostgres(drizzlePostgres(client), { migrationsFolder }));
  } finally {
    await lock`select pg_advisory_unlock(${MIGRATION_LOCK})`.catch(() => undefined);
    await lock.end({ timeout: 5 });
  }
}

/**
 * A failed migration says why: drizzle's error is "Failed query: <the whole statement>", and
 * the database's reason (`relation "…" already exists`) is only in its cause.
 */
async function withReason(migrate: () => Promise<void>): Promise<void> {
  try {
    await migrate();
  } catch (error) {
    let reason = error;
    while (reason instanceof Error && reason.cause instanceof Error) reason = reason.cause;
    if (reason === error || !(reason instanceof Error)) throw error;
    const statement = error instanceof Error ? error.message.split('\n')[0] : '';
    throw new Error(`a database migration failed: ${reason.message} (${statement})`, { cause: error });
  }
}

export function pgliteDirFor(dataDir: string): string {
  return join(dataDir, 'pglite');
}
