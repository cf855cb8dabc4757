// The scaled-out topology of deploy/compose.yaml, as processes on this machine: Redis, two
// LiveKit nodes sharing it, Postgres, the S3 server, a load balancer in front of two
// `likeness serve --role api` processes, and two `--role agent` workers. The Likeness
// processes get the environment compose gives their services (compose.ts), with this
// machine's addresses in place of compose's hosts and secrets.

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { LocalLivekitServer, livekitBinary } from '../../src/livekit/index.ts';
import { freeTcpPort, freeUdpRange } from '../../src/livekit/local-ports.ts';
import { type AgentProcess, startAgentProcess } from '../support/agent-process.ts';
import { type LoadBalancer, startLoadBalancer } from '../support/load-balancer.ts';
import { freshDatabase } from '../support/postgres.ts';
import { collectOutput, drain, readUntil, tempDir } from '../support/processes.ts';
import { freshBucket } from '../support/s3.ts';
import { eventually } from '../support/visitor.ts';
import { composeEnvironment } from './compose.ts';

const CLI = join(import.meta.dir, '../../src/cli/index.ts');
const HANGING_PIPELINE = join(import.meta.dir, 'hanging-pipeline.ts');

export interface ApiProcess {
  child: Subprocess<'ignore', 'pipe', 'pipe'>;
  /** Its own address (PUBLIC_URL): visitors who start here get rtc_url here. */
  url: string;
  kill(): void;
  /** What it printed lately (its last 200,000 characters of each stream), for a failure's story. */
  output(): string;
}

export interface LivekitNode {
  server: LocalLivekitServer;
  /** Rooms this node hosts now (its Prometheus gauge). */
  rooms(): Promise<number>;
}

export interface Cluster {
  nodes: LivekitNode[];
  apis: ApiProcess[];
  agents: AgentProcess[];
  balancer: LoadBalancer;
  databaseUrl: string;
  adminToken: string;
  metricsToken: string;
  stop(): Promise<void>;
}

/** Settings the test tunes beyond compose: short timeouts, so what takes minutes takes seconds. */
export const TEST_TUNING = {
  HOST: '127.0.0.1',
  SESSION_SWEEP_INTERVAL_SECONDS: '1',
  SESSION_JOIN_TIMEOUT_SECONDS: '8',
  WORK_LEASE_SECONDS: '3',
  RECOVERY_GRACE_SECONDS: '0',
  BILLING_INTERVAL_SECONDS: '5',
  CREDITS_ONBOARDING: '0',
};

async function startRedis(dirs: string[]): Promise<{ address: string; child: Subprocess }> {
  const port = await freeTcpPort('127.0.0.1');
  const child = Bun.spawn(
    [
      process.env.LIKENESS_REDIS_SERVER ?? 'redis-server',
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      await tempDir(dirs, 'likeness-redis-'),
    ],
    {
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    },
  );
  await readUntil(child.stdout, 'Ready to accept connections');
  drain(child.stdout);
  drain(child.stderr);
  return { address: `127.0.0.1:${port}`, child };
}

async function prometheusRooms(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(/^livekit_room_total\{[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
}

/**
 * `apiEnv`, `agentEnv`: settings of the API processes and of the workers over compose's and
 * TEST_TUNING (a bench turns the fair share off; the cluster test points the workers' language
 * model at a wire fake).
 */
export async function startCluster(
  dirs: string[],
  {
    agentMaxJobs = 2,
    apiEnv = {},
    agentEnv = {},
  }: { agentMaxJobs?: number; apiEnv?: Record<string, string>; agentEnv?: Record<string, string> } = {},
): Promise<Cluster> {
  const redis = await startRedis(dirs);
  const credentials = {
    apiKey: 'likeness',
    apiSecret: crypto.randomUUID().replaceAll('-', '') + crypto.randomUUID().replaceAll('-', ''),
  };
  const apiPorts = [await freeTcpPort('127.0.0.1'), await freeTcpPort('127.0.0.1')];
  // The load balancer in front of the API processes: what INTERNAL_URL and LiveKit's webhooks reach.
  const balancer = startLoadBalancer(apiPorts.map((port) => `http://127.0.0.1:${port}`));
  const nodes: LivekitNode[] = [];
  for (let i = 0; i < 2; i++) {
    const prometheusPort = await freeTcpPort('127.0.0.1');
    const server = await LocalLivekitServer.start({
      binary: livekitBinary(),
      dataDir: await tempDir(dirs, `likeness-cluster-node${i}-`),
      credentials,
      redis: redis.address,
      webhookUrl: `${balancer.url}/internal/livekit/webhook`,
      prometheusPort,
      udpPorts: await freeUdpRange('127.0.0.1', 40),
      // New rooms go to the node with the fewest: the test's sessions spread over both.
      nodeSelector: 'rooms',
      log: () => {},
    });
    nodes.push({ server, rooms: () => prometheusRooms(prometheusPort) });
  }

  const databaseUrl = await freshDatabase();
  const bucket = await freshBucket();
  const adminToken = crypto.randomUUID();
  const metricsToken = crypto.randomUUID();
  // What compose names by its hosts and secrets, here.
  const local = (node: LivekitNode, extra: Record<string, string>) => ({
    DATABASE_URL: databaseUrl,
    ...bucket.env(),
    LIVEKIT_URL: node.server.url,
    LIVEKIT_API_KEY: credentials.apiKey,
    LIVEKIT_API_SECRET: credentials.apiSecret,
    INTERNAL_URL: balancer.url,
    ADMIN_TOKEN: adminToken,
    METRICS_TOKEN: metricsToken,
    ...extra,
  });

  // Both API processes at once, on the empty database: the migrations must run once.
  const apis = await Promise.all(
    apiPorts.map(async (port, i): Promise<ApiProcess> => {
      const url = `http://127.0.0.1:${port}`;
      const env = {
        ...composeEnvironment('api', local(nodes[i]!, { PUBLIC_URL: url, PORT: String(port) })),
        ...TEST_TUNING,
        ...apiEnv,
        DATA_DIR: await tempDir(dirs, `likeness-cluster-api${i}-`),
        // The first API process's first training never ends: the test kills it mid-retrain.
        ...(i === 0 ? { PIPELINE_MODULES: HANGING_PIPELINE, HANG_ON_TRAINING: '1' } : {}),
      };
      const child = Bun.spawn(['bun', CLI, 'serve', '--role', 'api'], {
        env: { ...process.env, ...env },
        stdin: 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
      });
      await readUntil(child.stdout, 'listening');
      const printed = collectOutput(child.stdout, 200_000);
      const errors = collectOutput(child.stderr, 200_000);
      return {
        child,
        url,
        kill: () => child.kill('SIGKILL'),
        output: () => `${printed.text()}\n--- stderr ---\n${errors.text()}`,
      };
    }),
  );
  for (const api of apis)
    await eventually(
      async () => (await fetch(`${api.url}/readyz`).catch(() => undefined))?.status === 200,
      60_000,
      `${api.url} ready`,
    );

  const agents = await Promise.all(
    nodes.map(async (node) =>
      startAgentProcess({
        livekit: node.server,
        internalUrl: balancer.url,
        dirs,
        env: {
          ...composeEnvironment('agent', local(node, { AGENT_HEALTH_PORT: String(await freeTcpPort('127.0.0.1')) })),
          ...TEST_TUNING,
          AGENT_MAX_JOBS: String(agentMaxJobs),
          AGENT_DRAIN_SECONDS: '2',
          ...agentEnv,
        },
      }),
    ),
  );

  return {
    nodes,
    apis,
    agents,
    balancer,
    databaseUrl,
    adminToken,
    metricsToken,
    async stop() {
      for (const agent of agents) agent.kill();
      for (const api of apis) api.kill();
      await Promise.all([...apis.map((a) => a.child.exited), ...agents.map((a) => a.child.exited)]);
      for (const node of nodes) await node.server.stop();
      balancer.stop();
      redis.child.kill('SIGKILL');
      await redis.child.exited;
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    },
  };
}
