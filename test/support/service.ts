// An in-process Likeness control plane on a chosen database engine, with helpers to
// make accounts and call the API as they would.
import { test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { type AgentWorker, startAgentWorker } from '../../agent/worker.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/index.ts';
import { connectLivekit } from '../../src/livekit/connection.ts';
import { type RunningService, type ServiceOverrides, startService } from '../../src/server.ts';
import { migratedDatabase, seedPglite } from './database-templates.ts';
import { statFields } from './proc-stat.ts';

export type Engine = 'pglite' | 'postgres';
/** Both engines: for suites where the database is the point (queries, migrations, locking, restarts). */
export const ENGINES: Engine[] = ['pglite', 'postgres'];

/**
 * One engine, for a suite where the database is not the point (a session's media, its agent,
 * its billing minutes in real time): it runs once, and such suites take the engines in turn so
 * both stay covered (docs/testing.md#engines lists which and why).
 */
export function oneEngine(engine: Engine): Engine[] {
  return [engine];
}

/** `test` where `runs`, else nothing registered (a skip would read as work left undone). */
export function testOn(runs: boolean): typeof test {
  return runs ? test : ((() => undefined) as unknown as typeof test);
}

export interface TestAccount {
  accountId: string;
  apiKey: string;
  /** fetch against the service with this account's key. */
  call(method: string, path: string, init?: { body?: BodyInit; headers?: Record<string, string> }): Promise<Response>;
}

export interface TestService extends RunningService {
  engine: Engine;
  /** The in-process agent worker (`agent: true`). */
  worker: AgentWorker | undefined;
  config: Config;
  dataDir: string;
  account(options?: { credits?: number; email?: string }): Promise<TestAccount>;
  call(method: string, path: string, init?: { body?: BodyInit; headers?: Record<string, string> }): Promise<Response>;
  /** Every asset key in the store. */
  assetKeys(): Promise<string[]>;
  /** Count rows of a table (for "nothing was added" assertions). */
  count(table: 'identities' | 'credit_ledger' | 'accounts' | 'api_keys'): Promise<number>;
  /** Stop the service but keep its data (to restart on it). */
  stopKeepingData(): Promise<void>;
}

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

export interface TestServiceOptions {
  /**
   * `none` (default): LiveKit points at a closed port, for suites that never start a session.
   * `local`: LiveKit as the service is configured: a local server it starts, as `npm start`
   *   does, or the one `env.LIVEKIT_URL` names.
   */
  livekit?: 'none' | 'local';
  /** Also run the agent worker in this process (needs `livekit: 'local'`). */
  agent?: boolean;
  env?: Record<string, string>;
  overrides?: ServiceOverrides;
  /** Reuse a data folder (and, for PGlite, its database) from a stopped service. */
  dataDir?: string;
  databaseUrl?: string;
}

export async function startTestService(engine: Engine, options: TestServiceOptions = {}): Promise<TestService> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'likeness-test-')));
  const databaseUrl = engine === 'postgres' ? (options.databaseUrl ?? (await migratedDatabase())) : undefined;
  const livekit =
    (options.livekit ?? 'none') === 'none' && !options.overrides?.livekit
      ? connectLivekit({
          url: 'ws://127.0.0.1:9',
          publicUrl: 'ws://127.0.0.1:9',
          apiKey: 'none',
          apiSecret: 'unused-unused-unused-unused-unused',
        })
      : options.overrides?.livekit;
  let config: Config;
  let running: RunningService;
  for (let attempt = 1; ; attempt++) {
    config = loadConfig({
      HOST: '127.0.0.1',
      PORT: String(freePort()),
      DATA_DIR: dataDir,
      // Suites without a worker start sessions an agent never takes (they act as the job).
      SESSION_ADMISSION: options.agent ? 'workers' : 'off',
      // Suites start many sessions and identities from one account; the limits' own suite
      // (test/limits) sets them, and test/config checks the defaults.
      LIMIT_CONCURRENT_SESSIONS: '0',
      LIMIT_SESSION_STARTS_PER_MINUTE: '0',
      LIMIT_CONCURRENT_IDENTITY_CREATES: '0',
      LIMIT_IDENTITY_CREATES_PER_HOUR: '0',
      // Suites fill their workers from one account; admission's fair share has its own suite.
      SESSION_RESERVED_PERCENT: '0',
      // A visitor who leaves ends the session at once; the wait for one coming back has its own suite.
      SESSION_REJOIN_SECONDS: '0',
      // Each route compiled at its first request: a suite asks a few of them, and compiling all
      // of them costs ~0.5 s of CPU per start (warm-before-ready checks the default on `serve`).
      PRECOMPILE_ROUTES: 'false',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...options.env,
    });
    // Fresh PGlite folders per test service keep suites independent; a restart on the same
    // DATA_DIR (recovery tests) finds the database where the service itself keeps it.
    if (engine === 'pglite' && !options.overrides?.database) await seedPglite(join(dataDir, 'pglite'));
    const database =
      options.overrides?.database ??
      (engine === 'postgres' ? undefined : await openDatabase({ pgliteDir: join(dataDir, 'pglite') }));
    try {
      running = await startService(config, {
        ...options.overrides,
        ...(database ? { database } : {}),
        ...(livekit ? { livekit } : {}),
      });
      break;
    } catch (error) {
      // The free port was taken between the probe and the listen (an outgoing connection's
      // ephemeral port, on a busy machine): try another. startService closed the database.
      if ((error as { code?: string }).code !== 'EADDRINUSE' || attempt === 3 || options.overrides?.database) {
        if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  const worker = options.agent
    ? await startAgentWorker({
        wsURL: running.services.livekit.url,
        apiKey: running.services.livekit.apiKey,
        apiSecret: running.services.livekit.apiSecret,
        agentName: config.livekit.agentName,
        controlPlaneUrl: running.url,
        // The suite's own AGENT_MAX_JOBS, else the worker reads this process's (preload.ts).
        maxConcurrentJobs: options.env?.AGENT_MAX_JOBS ? config.agent.maxJobs : undefined,
      })
    : undefined;
  const call: TestService['call'] = (method, path, init = {}) =>
    fetch(`${running.url}${path}`, { method, body: init.body, headers: init.headers });
  let counter = 0;
  return {
    ...running,
    engine,
    worker,
    config,
    dataDir,
    call,
    async account({ credits = 1000, email } = {}) {
      const created = await running.services.operations.createAccount({
        email: email ?? `user${++counter}-${crypto.randomUUID().slice(0, 8)}@example.com`,
        credits,
      });
      return {
        accountId: created.account_id,
        apiKey: created.api_key,
        call: (method, path, init = {}) =>
          call(method, path, { ...init, headers: { authorization: `Bearer ${created.api_key}`, ...init.headers } }),
      };
    },
    assetKeys: () => running.services.store.list('identities/'),
    async count(table) {
      const result = await running.services.database.db.execute(sql.raw(`select count(*)::int as n from ${table}`));
      const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { n: number }[];
      return rows[0]!.n;
    },
    async stopKeepingData() {
      await stopWithin(running, worker);
    },
    async stop() {
      await stopWithin(running, worker);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A suite's afterAll has a minute (bun's --timeout): a stop that ran out of it left its
 * processes to the next suite of the stream (CI, stop 57: typed-chat's LiveKit and job
 * processes, and visitor-reach after it failed too), and said nothing of what held it.
 */
const STOP_DEADLINE_MS = 45_000;

/**
 * The worker, then the service. Past STOP_DEADLINE_MS it fails with what held it (the step, the
 * sessions still running, this process's children), after ending what it started: LiveKit, then
 * every child process (a stream's suites run one after the other, so they are this suite's).
 */
async function stopWithin(running: RunningService, worker: AgentWorker | undefined): Promise<void> {
  let step = 'the agent worker';
  const stopping = (async () => {
    await stopWorker(worker);
    step = 'the service';
    await running.stop();
  })();
  const held = await Promise.race([stopping.then(() => false), Bun.sleep(STOP_DEADLINE_MS).then(() => true)]);
  if (!held) return;
  const sessions = worker?.runningSessions() ?? 0;
  const children = childProcesses();
  await running.services.localLivekit?.stop();
  for (const child of children) {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(
    `the test service's stop held in ${step} for ${STOP_DEADLINE_MS / 1000} s (${sessions} sessions running); ` +
      `this process's children then, killed: ${children.map((c) => `${c.pid} ${c.state} ${c.command}`).join('; ') || 'none'}`,
  );
}

/** This process's children: pid, state (R running, S sleeping, D in I/O, Z exited) and command line. */
function childProcesses(): { pid: number; state: string; command: string }[] {
  const children: { pid: number; state: string; command: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const [state, ppid] = statFields(`/proc/${name}/stat`);
      if (Number(ppid) !== process.pid) continue;
      const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').trim().slice(0, 120);
      children.push({ pid: Number(name), state: state ?? '?', command });
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** A worker that takes long to stop says so: a suite's afterAll has a minute, and its log keeps little else. */
async function stopWorker(worker: Awaited<ReturnType<typeof startAgentWorker>> | undefined): Promise<void> {
  if (!worker) return;
  const began = performance.now();
  const running = worker.runningSessions();
  await worker.stop();
  const took = performance.now() - began;
  if (took > 15_000)
    console.error(`the agent worker took ${Math.round(took)} ms to stop (${running} sessions running)`);
}

/** Polls an identity's status until it reads `status` (a retrain finishing, say). */
export async function waitForStatus(account: TestAccount, id: string, status: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = (await (await account.call('GET', `/v1/identities/${id}/status`)).json()) as {
      status: string;
      detail: string | null;
    };
    if (body.status === status) return body;
    if (Date.now() > deadline) throw new Error(`identity ${id} stayed ${body.status}`);
    await Bun.sleep(50);
  }
}
