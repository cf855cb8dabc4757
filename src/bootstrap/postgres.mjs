// A throwaway Postgres cluster for the test suites: a fresh data directory in a temp
// folder, a free loopback port, durability switched off for speed, deleted afterwards.
//
// The server runs as a direct child of the bootstrap (not daemonized by pg_ctl), so it
// dies with the bootstrap's process group and is reaped here: this machine's pid 1
// does not reap orphans, and each daemonized postmaster would stay behind as a zombie.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { log, secondsSince } from './log.mjs';
import { freeLoopbackPort, interruption, processAlive, run, runChecked, runSync } from './processes.mjs';

const DEBIAN_PG_ROOT = '/usr/lib/postgresql';
const CLUSTER_DIR_PREFIX = 'likeness-pg-';
const SUPERUSER = 'postgres'; // database role; trust auth, so no password
const DATABASE = 'likeness';
const SERVER_OS_USER = 'postgres'; // Postgres refuses to run as root
const READY_TIMEOUT_MS = 30_000;

const SERVER_SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  // Throwaway data: nothing needs to survive a crash.
  'fsync = off',
  'synchronous_commit = off',
  'full_page_writes = off',
  'wal_level = minimal',
  'max_wal_senders = 0',
  // Every test file may hold its own pool against its own database.
  'max_connections = 200',
];

/** The newest Debian Postgres bin dir that has initdb, or null. */
function findBinDir() {
  let versions;
  try {
    versions = fs.readdirSync(DEBIAN_PG_ROOT);
  } catch {
    return null;
  }
  const newest = versions
    .filter((version) => fs.existsSync(path.join(DEBIAN_PG_ROOT, version, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))[0];
  return newest ? path.join(DEBIAN_PG_ROOT, newest, 'bin') : null;
}

/** Installs Debian's postgresql package when no initdb is present; returns the bin dir. */
export async function ensurePostgresInstalled() {
  const found = findBinDir();
  if (found) return found;

  const startedAt = performance.now();
  log('Postgres not found: installing the postgresql package with apt-get (once per machine)…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await runChecked('apt-get', ['update', '-q'], { env });
  await runChecked('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'postgresql'], { env });
  const binDir = findBinDir();
  if (!binDir) throw new Error(`apt-get installed postgresql, but no ${DEBIAN_PG_ROOT}/*/bin/initdb exists`);
  log(`Postgres installed in ${binDir} (${secondsSince(startedAt)})`);
  return binDir;
}

/**
 * Spawn options ({ uid, gid }) that run the server's binaries as the postgres OS user
 * when we are root (creating that user if missing), or {} to run them as ourselves.
 */
function serverIdentity() {
  if (process.getuid?.() !== 0) return {};
  if (runSync('id', ['-u', SERVER_OS_USER]).status !== 0) {
    log(`creating the system user ${SERVER_OS_USER} to run Postgres as`);
    const created = runSync('useradd', ['--system', '--user-group', '--no-create-home', SERVER_OS_USER]);
    if (created.status !== 0) throw new Error(`useradd ${SERVER_OS_USER} failed: ${created.stderr.trim()}`);
  }
  return {
    uid: Number(runSync('id', ['-u', SERVER_OS_USER]).stdout),
    gid: Number(runSync('id', ['-g', SERVER_OS_USER]).stdout),
  };
}

/**
 * The cluster folder's name carries the bootstrap's pid, so a later run can tell a
 * folder left by a killed bootstrap (pid gone) from one in use.
 */
function makeClusterDir(identity) {
  const candidates = [...new Set([os.tmpdir(), '/tmp'])];
  for (const base of candidates) {
    const dir = fs.mkdtempSync(path.join(base, `${CLUSTER_DIR_PREFIX}${process.pid}-`));
    if (identity.uid === undefined) return dir;
    fs.chownSync(dir, identity.uid, identity.gid);
    // A TMPDIR under /root is not reachable by the postgres user; fall back to /tmp.
    if (runSync('test', ['-w', dir], identity).status === 0) return dir;
    fs.rmSync(dir, { recursive: true, force: true });
  }
  throw new Error(`no temp folder writable by the ${SERVER_OS_USER} user (tried ${candidates.join(', ')})`);
}

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The postmaster.pid lines (pid first, status such as "ready" eighth), or null. */
function readPostmasterPid(dataDir) {
  try {
    return fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return null;
  }
}

/** Stops a postmaster we did not start ourselves (a stale one), only if it really serves dataDir. */
function killStalePostmaster(dataDir) {
  const pid = Number(readPostmasterPid(dataDir)?.[0]);
  let cmdline = '';
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return;
  }
  if (!cmdline.includes(dataDir)) return;
  try {
    process.kill(pid, 'SIGQUIT'); // Postgres' immediate shutdown
    for (let waited = 0; waited < 5000 && processAlive(pid); waited += 50) sleepSync(50);
    if (processAlive(pid)) process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Removes clusters left behind by bootstraps that were killed before they could clean up. */
function sweepStaleClusters() {
  for (const base of new Set([os.tmpdir(), '/tmp'])) {
    let entries = [];
    try {
      entries = fs.readdirSync(base);
    } catch {
      continue;
    }
    for (const entry of entries) {
      const owner = entry.match(new RegExp(`^${CLUSTER_DIR_PREFIX}(\\d+)-`));
      if (!owner || processAlive(Number(owner[1]))) continue;
      const dir = path.join(base, entry);
      log(`removing a throwaway Postgres left behind by an earlier run: ${dir}`);
      killStalePostmaster(path.join(dir, 'data'));
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  }
}

function tailOf(file, lines = 20) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Runs a command quietly; its output is shown only if it fails. */
async function runQuietly(label, command, args, options) {
  const chunks = [];
  const collect = (chunk) => chunks.push(chunk);
  const status = await run(command, args, { ...options, onStdout: collect, onStderr: collect });
  if (status !== 0) {
    throw new Error(`${label} failed (exit ${status}):\n${Buffer.concat(chunks).toString().trimEnd()}`);
  }
}

/**
 * Starts `postgres` on the port and resolves with { child, exited } once postmaster.pid
 * says "ready" (what pg_ctl -w waits for); rejects if it exits first (e.g. port taken).
 */
async function startServer({ postgresBin, dataDir, port, logFile, options }) {
  const logFd = fs.openSync(logFile, 'a');
  const child = spawn(postgresBin, ['-D', dataDir, '-p', String(port)], {
    ...options,
    stdio: ['ignore', logFd, logFd],
  });
  fs.closeSync(logFd);
  let running = true;
  const exited = new Promise((resolve) => child.once('exit', () => resolve((running = false))));

  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (running) {
    if (readPostmasterPid(dataDir)?.[7]?.trim() === 'ready') return { child, exited };
    if (Date.now() > deadline || interruption()) {
      child.kill('SIGQUIT');
      await exited;
      throw new Error(interruption() ? `interrupted by ${interruption()}` : 'Postgres did not become ready in time');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`postgres exited during startup:\n${tailOf(logFile)}`);
}

/**
 * Starts a fresh cluster with one database. Returns { url, stop }: stop() shuts the
 * server down and deletes the folder; it is idempotent, and a synchronous fallback runs
 * at process exit, so the cluster never outlives the bootstrap.
 */
export async function startThrowawayPostgres(binDir) {
  const startedAt = performance.now();
  sweepStaleClusters();
  const identity = serverIdentity();
  const dir = makeClusterDir(identity);
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'postgres.log');
  const bin = (name) => path.join(binDir, name);
  // Locale-independent, and run from a cwd the postgres user can enter.
  const options = { ...identity, cwd: dir, env: { ...process.env, LC_ALL: 'C' } };

  let server = null;
  let removed = false;
  const serverRunning = () => server && server.child.exitCode === null && server.child.signalCode === null;
  const removeNow = () => {
    if (removed) return;
    removed = true;
    if (serverRunning()) server.child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
  process.on('exit', removeNow);
  const stop = async () => {
    if (removed) return;
    if (serverRunning()) {
      server.child.kill('SIGQUIT'); // immediate shutdown: the data is thrown away anyway
      await server.exited;
    }
    removeNow();
    log('stopped the throwaway Postgres and removed its folder');
  };

  try {
    log(`starting a throwaway Postgres in ${dir}…`);
    await runQuietly(
      'initdb',
      bin('initdb'),
      ['-D', dataDir, '-U', SUPERUSER, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      options,
    );
    fs.appendFileSync(
      path.join(dataDir, 'postgresql.conf'),
      `\n# likeness throwaway test cluster\n${[...SERVER_SETTINGS, `unix_socket_directories = '${dir}'`].join('\n')}\n`,
    );

    // The port is free when picked but could be taken before Postgres binds it: retry.
    let port;
    for (let attempt = 1; !server; attempt++) {
      port = await freeLoopbackPort();
      try {
        server = await startServer({ postgresBin: bin('postgres'), dataDir, port, logFile, options });
      } catch (error) {
        if (attempt === 3 || interruption()) throw error;
      }
    }

    await runQuietly(
      'createdb',
      bin('createdb'),
      ['-h', '127.0.0.1', '-p', String(port), '-U', SUPERUSER, DATABASE],
      options,
    );
    const url = `postgres://${SUPERUSER}@127.0.0.1:${port}/${DATABASE}`;
    log(`Postgres ready at ${url} (${secondsSince(startedAt)})`);
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
