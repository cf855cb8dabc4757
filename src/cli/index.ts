#!/usr/bin/env bun
// `likeness`: run the service, and the operator's commands for accounts, keys and credits.
// Its interface is stable (scripts depend on it): each command prints one JSON line.
import { parseArgs } from 'node:util';
import type { AgentWorker } from '../../agent/worker.ts';
import { adminTokenFor, databaseOperations, type Operations, OperatorError, runningService } from '../admin/index.ts';
import { type AccountLimits, type Config, loadConfig } from '../config.ts';
import { openDatabase, pgliteDirFor } from '../db/index.ts';
import { LIMIT_NAMES } from '../limits/index.ts';
import type { RunningService } from '../server.ts';

/** What `serve --role` runs: the control plane, the agent worker, or both in one process. */
export const ROLES = ['api', 'agent', 'all'] as const;
type Role = (typeof ROLES)[number];

const USAGE = `usage:
  likeness serve [--role api|agent|all]
  likeness health URL   (exit 0 when URL answers 2xx: a container's HEALTHCHECK)
  likeness accounts create --email E [--credits N]
  likeness accounts set-password --account A   (the console password, read from standard input)
  likeness keys create --account A [--name N] [--test]
  likeness keys list --account A
  likeness keys revoke --account A --key K
  likeness credits grant --account A --amount N
  likeness credits balance --account A
  likeness limits show --account A
  likeness limits set --account A [--reset] [--concurrent-sessions N] [--session-starts-per-minute N]
                      [--concurrent-identity-creates N] [--identity-creates-per-hour N]   (0: no limit)`;

class UsageError extends Error {}

/** A limit's command-line flag: `concurrent_sessions` → `concurrent-sessions`. */
const flagOf = (name: string) => name.replaceAll('_', '-');

/** Talk to the running service over HTTP: it owns the embedded database. */
function httpOperations(url: string, token: string): Operations {
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}/internal/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const payload = (await response.json()) as { detail?: unknown };
    if (!response.ok) {
      const status =
        response.status === 404 || response.status === 409 || response.status === 422 ? response.status : 400;
      throw new OperatorError(
        status,
        typeof payload.detail === 'string' ? payload.detail : JSON.stringify(payload.detail),
      );
    }
    return payload as never;
  };
  const q = (params: Record<string, string>) => `?${new URLSearchParams(params)}`;
  return {
    createAccount: (input) => call('POST', '/accounts', input),
    createKey: (input) => call('POST', '/keys', input),
    listKeys: (input) => call('GET', `/keys${q(input)}`),
    revokeKey: (input) => call('POST', '/keys/revoke', input),
    grantCredits: (input) => call('POST', '/credits/grant', input),
    balance: (input) => call('GET', `/credits/balance${q(input)}`),
    setConsolePassword: (input) => call('POST', '/console-password', input),
    setLimits: (input) => call('POST', '/limits', input),
    showLimits: (input) => call('GET', `/limits${q(input)}`),
  };
}

async function withOperations<T>(config: Config, action: (ops: Operations) => Promise<T>): Promise<T> {
  if (!config.databaseUrl) {
    const running = await runningService(config);
    if (running) return action(httpOperations(running.url, await adminTokenFor(config)));
  }
  const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: pgliteDirFor(config.dataDir) });
  try {
    return await action(databaseOperations(database.db, config));
  } finally {
    await database.close();
  }
}

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || !value) throw new UsageError(`--${name} is required`);
  return value;
}

/** A password comes on standard input, never in argv (shell history, `ps`). One line; its newline is not part of it. */
async function passwordFromStdin(): Promise<string> {
  if (process.stdin.isTTY)
    throw new UsageError('pipe the password on standard input, e.g. `read -rs P; printf %s "$P" | likeness …`');
  return (await Bun.stdin.text()).replace(/\r?\n$/, '');
}

function whole(value: string, name: string): number {
  if (!/^-?\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}

/** The start line: the address to give people, and what their browser says the first time. */
function whereToOpen(config: Config, service: RunningService): string {
  const secure = service.secure;
  if (!secure) return `listening: open ${config.publicUrl}/console`;
  const warning = secure.certificate.selfMade
    ? ' (the certificate is made by this service: the browser warns once per device, "Your connection is not private"; choose Advanced, then Proceed)'
    : '';
  return `listening: open ${secure.url}/console on any device of the network${warning}; plain HTTP at ${config.publicUrl}`;
}

/** Run the control plane, the agent worker, or both (the default) in this process. */
async function serve(config: Config, role: Role): Promise<void> {
  // Loaded here, not at the top: the operator commands need neither the server nor the agents SDK.
  // The namespace, not a destructured `log`: that would keep the logger from before configureLogging.
  const logging = await import('../logging/index.ts');
  logging.configureLogging(config.log);
  const log = () => logging.log;
  const { startService } = await import('../server.ts');
  const { startAgentWorker } = await import('../../agent/worker.ts');
  const { serveWorkerHealth } = await import('../../agent/health.ts');
  const service = role === 'agent' ? undefined : await startService(config);
  if (service)
    log().info(
      {
        url: service.url,
        public_url: config.publicUrl,
        secure_url: service.secure?.url,
        database: service.services.database.engine,
      },
      whereToOpen(config, service),
    );
  let worker: AgentWorker | undefined;
  if (role !== 'api') {
    // Alone, the worker needs an external LiveKit; beside the API it uses the API's (maybe local) one.
    const livekit = service?.services.livekit ?? {
      url: config.livekit.url ?? '',
      apiKey: config.livekit.apiKey ?? '',
      apiSecret: config.livekit.apiSecret ?? '',
    };
    if (!livekit.url || !livekit.apiKey || !livekit.apiSecret) {
      throw new Error('--role agent needs LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET');
    }
    // Heartbeats go to the control plane: this process's own, or INTERNAL_URL's for a worker alone.
    worker = await startAgentWorker({
      wsURL: livekit.url,
      apiKey: livekit.apiKey,
      apiSecret: livekit.apiSecret,
      agentName: config.livekit.agentName,
      controlPlaneUrl: service?.url ?? config.internalUrl,
      // The agents SDK's own pino, JSON lines on stdout beside ours; its jobs tag theirs with session_id.
      logLevel: config.log.level === 'silent' ? 'fatal' : config.log.level,
    });
  }
  // Beside the API, the worker's warmth is part of the service's readiness (one /readyz for the process).
  if (service && worker) {
    const local = worker;
    service.services.readiness.add('agent', async () => {
      if (!local.warmedUp()) throw new Error(`${local.warmProcesses()} of ${local.capacity} job processes warm`);
    });
  }
  const health = worker && config.agent.healthPort ? serveWorkerHealth(worker, config.agent.healthPort) : undefined;

  // A stop drains: the worker takes no new sessions and gives the running ones
  // AGENT_DRAIN_SECONDS; the API finishes the requests in flight. A second signal stops at once.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      log().info({ signal }, 'signalled again: stopping now');
      process.exit(1);
    }
    stopping = true;
    const running = worker?.runningSessions() ?? 0;
    if (running)
      log().info(
        { signal, sessions: running, drain_seconds: config.agent.drainSeconds },
        'draining sessions (signal again to stop now)',
      );
    await worker?.stop({ drainTimeoutMs: config.agent.drainSeconds * 1000 });
    health?.stop();
    await service?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // Said once the signals are handled: a SIGTERM sent on this line drains (sent between the line
  // and the handlers, it ended the process with 143 in a loaded suite run).
  if (worker)
    log().info(
      { agent_name: config.livekit.agentName, worker_id: worker.id },
      `agent worker registered as ${config.livekit.agentName}`,
    );
  if (health)
    log().info(
      { port: config.agent.healthPort },
      'agent worker health, readiness and metrics on their port (/healthz, /readyz, /metrics)',
    );
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the command table: one branch per command, each a call or two
export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      credits: { type: 'string' },
      account: { type: 'string' },
      name: { type: 'string' },
      key: { type: 'string' },
      amount: { type: 'string' },
      role: { type: 'string' },
      reset: { type: 'boolean' },
      test: { type: 'boolean' },
      ...Object.fromEntries(LIMIT_NAMES.map((name) => [flagOf(name), { type: 'string' as const }])),
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [group, verb] = positionals;
  const config = loadConfig();
  if (values.help || !group) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  if (group === 'serve') {
    const role = values.role ?? 'all';
    if (!(ROLES as readonly string[]).includes(role)) throw new UsageError(`--role is ${ROLES.join(', ')}`);
    await serve(config, role as Role);
    return -1; // keep running
  }
  if (group === 'health') {
    if (!verb) throw new UsageError('health needs a URL, e.g. http://127.0.0.1:8080/readyz');
    const answer = await fetch(verb, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
    return answer?.ok ? 0 : 1;
  }
  const command = `${group} ${verb ?? ''}`.trim();
  // Read before the database opens: a usage error should not wait for it.
  const password = command === 'accounts set-password' ? await passwordFromStdin() : '';
  const result = await withOperations<unknown>(config, (ops) => {
    switch (command) {
      case 'accounts create':
        return ops.createAccount({
          email: required(values, 'email'),
          credits: values.credits === undefined ? undefined : whole(values.credits, 'credits'),
        });
      case 'accounts set-password':
        return ops.setConsolePassword({ account_id: required(values, 'account'), password });
      case 'keys create':
        return ops.createKey({ account_id: required(values, 'account'), name: values.name, test: values.test });
      case 'keys list':
        return ops.listKeys({ account_id: required(values, 'account') });
      case 'keys revoke':
        return ops.revokeKey({ account_id: required(values, 'account'), key_id: required(values, 'key') });
      case 'credits grant':
        return ops.grantCredits({
          account_id: required(values, 'account'),
          amount: whole(required(values, 'amount'), 'amount'),
        });
      case 'credits balance':
        return ops.balance({ account_id: required(values, 'account') });
      case 'limits show':
        return ops.showLimits({ account_id: required(values, 'account') });
      case 'limits set': {
        const limits: Partial<AccountLimits> = {};
        for (const name of LIMIT_NAMES) {
          const value = (values as Record<string, unknown>)[flagOf(name)];
          if (typeof value === 'string') limits[name] = whole(value, flagOf(name));
        }
        if (!Object.keys(limits).length && !values.reset)
          throw new UsageError('limits set needs --reset or at least one limit');
        return ops.setLimits({ account_id: required(values, 'account'), limits, reset: values.reset === true });
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  });
  console.log(JSON.stringify(result));
  return 0;
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (error) => {
      if (error instanceof UsageError) {
        console.error(`likeness: ${error.message}\n${USAGE}`);
        process.exit(2);
      }
      console.error(`likeness: ${error instanceof Error ? error.message : error}`);
      process.exit(1);
    },
  );
}
