// Several processes starting at once on an empty Postgres (API replicas rolled out together):
// the migrations run once, under an advisory lock, and every process comes up.
import { expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
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
