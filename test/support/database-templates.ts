// Migrated databases to start suites from. A fresh PGlite runs initdb (2–3 s of CPU) and both
// engines then run every migration: paid by each of the suite's hundreds of services, it was
// minutes of the run. Each is now paid once: a migrated PGlite folder copied into a service's
// fresh data folder (opening it costs ~0.15 s), and a migrated Postgres database each fresh
// one is created from (CREATE DATABASE … TEMPLATE). The service still runs its migrations at
// start and finds them applied; test/db covers migrating an empty database.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rename, rm, utimes } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { SQL } from 'bun';
import { openDatabase, pgliteDirFor } from '../../src/db/index.ts';
import { testDatabaseUrl } from './postgres.ts';
import { tempDir } from './processes.ts';

const MIGRATIONS = resolve(import.meta.dir, '../../drizzle');
const TEMPLATES = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'likeness', 'test-databases');

/** What the templates are made of: the migrations and the PGlite build. */
const fingerprint = (() => {
  const hash = createHash('sha256');
  const pglite = resolve(import.meta.dir, '../../node_modules/@electric-sql/pglite/package.json');
  hash.update(existsSync(pglite) ? readFileSync(pglite) : '');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else hash.update(entry.name).update(readFileSync(path));
    }
  };
  walk(MIGRATIONS);
  return hash.digest('hex').slice(0, 16);
})();

let pgliteTemplate: Promise<string> | undefined;
const STALE_TEMPLATE_MS = 24 * 3600 * 1000;

/** Since the folder was last used (its time is touched at each copy), in ms; removed meanwhile: 0. */
function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** The migrated PGlite folder, made on first use (kept in the cache across runs). */
function migratedPgliteFolder(): Promise<string> {
  pgliteTemplate ??= (async () => {
    const folder = join(TEMPLATES, `pglite-${fingerprint}`);
    if (existsSync(join(folder, 'PG_VERSION'))) return folder;
    await mkdir(TEMPLATES, { recursive: true });
    // Built aside and renamed into place: test processes running at once never see half a folder.
    const building = `${folder}.${process.pid}-${crypto.randomUUID().slice(0, 8)}`;
    const database = await openDatabase({ pgliteDir: building });
    await database.close();
    try {
      await rename(building, folder);
    } catch (error) {
      await rm(building, { recursive: true, force: true });
      if (!existsSync(join(folder, 'PG_VERSION'))) throw error;
    }
    // Templates of other migrations go once unused for a day: another checkout (a clean clone, a
    // branch) running at the same time may still be copying its own.
    for (const name of readdirSync(TEMPLATES)) {
      const other = join(TEMPLATES, name);
      if (name.startsWith('pglite-') && name !== `pglite-${fingerprint}` && ageMs(other) > STALE_TEMPLATE_MS)
        await rm(other, { recursive: true, force: true }).catch(() => undefined);
    }
    return folder;
  })();
  return pgliteTemplate;
}

/** Puts a migrated PGlite database in `pgliteDir`, unless one is there already (a restart). */
export async function seedPglite(pgliteDir: string): Promise<void> {
  if (existsSync(join(pgliteDir, 'PG_VERSION'))) return;
  const template = await migratedPgliteFolder();
  const now = new Date();
  await utimes(template, now, now).catch(() => undefined);
  // Synchronous: a quarter of the promise version's CPU (its per-file lstat and copy callbacks),
  // ~55 ms on the suites' memory filesystem.
  cpSync(template, pgliteDir, { recursive: true });
}

/**
 * A fresh data folder (kept in `dirs` for removal) holding the migrated embedded database, for a
 * service process whose first start on an empty folder is not what its suite checks: initdb and
 * every migration cost it 3–5 s of CPU (test/db and warm-before-ready start from empty).
 */
export async function seededDataDir(dirs: string[], prefix: string): Promise<string> {
  const dataDir = await tempDir(dirs, prefix);
  await seedPglite(pgliteDirFor(dataDir));
  return dataDir;
}

const POSTGRES_TEMPLATE = `likeness_template_${fingerprint}`;
/** Any constant of our own: the test processes take turns making the template. */
const TEMPLATE_LOCK = 0x6c6b7470;
let postgresTemplate: Promise<void> | undefined;

function migratedPostgresTemplate(): Promise<void> {
  postgresTemplate ??= (async () => {
    const admin = new SQL({ url: testDatabaseUrl(), max: 1 });
    try {
      await admin`select pg_advisory_lock(${TEMPLATE_LOCK})`;
      const [found] = await admin`select 1 from pg_database where datname = ${POSTGRES_TEMPLATE}`;
      if (!found) {
        // Migrated under another name, then renamed: a template is never seen half made.
        const building = `${POSTGRES_TEMPLATE}_building`;
        await admin.unsafe(`DROP DATABASE IF EXISTS ${building}`);
        await admin.unsafe(`CREATE DATABASE ${building}`);
        const database = await openDatabase({ databaseUrl: databaseUrlFor(building) });
        await database.close();
        await admin.unsafe(`ALTER DATABASE ${building} RENAME TO ${POSTGRES_TEMPLATE}`);
      }
    } finally {
      await admin`select pg_advisory_unlock(${TEMPLATE_LOCK})`.catch(() => undefined);
      await admin.close();
    }
  })();
  return postgresTemplate;
}

function databaseUrlFor(name: string): string {
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** A uniquely named Postgres database with every migration applied; returns its URL. */
export async function migratedDatabase(): Promise<string> {
  await migratedPostgresTemplate();
  const name = `likeness_test_${crypto.randomUUID().replaceAll('-', '')}`;
  const admin = new SQL({ url: testDatabaseUrl(), max: 1 });
  try {
    // CREATE DATABASE takes no parameters; both names are generated here, never user input.
    await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${POSTGRES_TEMPLATE}`);
  } finally {
    await admin.close();
  }
  return databaseUrlFor(name);
}
