// Several processes starting at once on an empty Postgres (API replicas rolled out together):
// the migrations run once, under an advisory lock, and every process comes up.
import { expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQL } from 'bun';
import { openDatabase } from '../../src/db/index.ts';
import { freshDatabase } from '../support/postgres.ts';

test('four processes opening one empty Postgres at once all start; each migration is applied once', async () => {
  const url = await freshDatabase();
  const migrations = readdirSync(join(import.meta.dir, '../../drizzle')).filter((name) => name.endsWith('.sql'));
  const opened = await Promise.allSettled(Array.from({ length: 4 }, () => openDatabase({ databaseUrl: url })));
  try {
    expect(opened.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok'))).toEqual(['ok', 'ok', 'ok', 'ok']);
    const sql = new SQL(url);
    try {
      const [row] = (await sql`select count(*)::int as n from drizzle.__drizzle_migrations`) as { n: number }[];
      expect(row?.n).toBe(migrations.length);
    } finally {
      await sql.close();
    }
  } finally {
    for (const o of opened) if (o.status === 'fulfilled') await o.value.close();
  }
}, 60_000);

// A migration that fails says the database's reason, on both engines (drizzle's own message
// is the whole statement; seen starting on a data dir that had an earlier draft of a migration).
test('a failed migration names the database’s reason and the statement', async () => {
  const { PGlite } = await import('@electric-sql/pglite');
  const dir = mkdtempSync(join(tmpdir(), 'likeness-migration-'));
  try {
    const early = new PGlite(dir);
    await early.exec('create table training_upgrades (identity_id text)');
    await early.close();
    const pglite = await openDatabase({ pgliteDir: dir }).then(
      () => 'opened',
      (error: Error) => error.message,
    );
    expect(pglite).toContain('relation "training_upgrades" already exists');
    expect(pglite).toContain('CREATE TABLE "training_upgrades"');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const url = await freshDatabase();
  const sql = new SQL(url);
  try {
    await sql`create table training_upgrades (identity_id text)`;
  } finally {
    await sql.close();
  }
  const postgres = await openDatabase({ databaseUrl: url }).then(
    () => 'opened',
    (error: Error) => error.message,
  );
  expect(postgres).toContain('relation "training_upgrades" already exists');
}, 60_000);
