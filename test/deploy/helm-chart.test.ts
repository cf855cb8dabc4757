// deploy/helm/likeness must not drift from the code (README "Deploy on Kubernetes"). No cluster
// runs here: Helm (built by src/bootstrap/helm.mjs) lints and renders the chart, and the
// rendered manifests are checked against the configuration, the CLI, and the health and
// metrics servers themselves (started here, on the paths the probes name).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { serveWorkerHealth, type WorkerHealth } from '../../agent/health.ts';
import type { AgentWorker } from '../../agent/worker.ts';
import { ROLES } from '../../src/cli/index.ts';
import { CONTROL_PLANE_SECRETS, loadAgentSettings, loadConfig } from '../../src/config.ts';
import { healthRoutes, Readiness } from '../../src/health/index.ts';
import { configSource as readConfigSource } from './config-source.ts';

const ROOT = join(import.meta.dir, '..', '..');
const CHART = join(ROOT, 'deploy/helm/likeness');
const CLUSTER_VALUES = join(CHART, 'examples/cluster-values.yaml');
/** Plain Node and untyped: imported by path, its one function typed here. */
const HELM_BOOTSTRAP = join(ROOT, 'src/bootstrap/helm.mjs');
const configSource = readConfigSource();

type Manifest = {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: any;
  stringData?: Record<string, string>;
};
type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
type Probe = { httpGet: { path: string; port: string | number } };
type Container = {
  name: string;
  command: string[];
  env: EnvVar[];
  ports: { name: string; containerPort: number }[];
  startupProbe: Probe;
  livenessProbe: Probe;
  readinessProbe: Probe;
};

let helm = '';
beforeAll(
  async () => {
    const { ensureHelm } = (await import(HELM_BOOTSTRAP)) as { ensureHelm(): Promise<string> };
    helm = await ensureHelm();
  },
  // The first time, Helm is built from its Go module (a few minutes on 2 cores); then it is cached.
  { timeout: 20 * 60_000 },
);

function runHelm(args: string[]): string {
  const result = Bun.spawnSync([helm, ...args], { stdout: 'pipe', stderr: 'pipe' });
  if (result.exitCode !== 0) throw new Error(`helm ${args.join(' ')}: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

/** `helm template` with these values, as manifests. */
function render(values: string[] = []): Manifest[] {
  const parsed = Bun.YAML.parse(runHelm(['template', 'likeness', CHART, '--namespace', 'avatars', ...values]));
  return (Array.isArray(parsed) ? parsed : [parsed]).filter(Boolean) as Manifest[];
}

const SCENARIOS: Record<string, string[]> = {
  default: [],
  cluster: ['-f', CLUSTER_VALUES],
  'drain 120': ['--set', 'agent.drainSeconds=120'],
};

function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in ${manifests.map((m) => `${m.kind}/${m.metadata.name}`)}`);
  return found;
}

const deployment = (manifests: Manifest[], role: 'api' | 'agent') => find(manifests, 'Deployment', `likeness-${role}`);
const container = (manifests: Manifest[], role: 'api' | 'agent'): Container =>
  deployment(manifests, role).spec.template.spec.containers[0];
/** The plain values a container's environment sets (the Secret's are left unset: their defaults). */
const plainEnv = (c: Container): Record<string, string> =>
  Object.fromEntries(c.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
/** The container port a probe names (by name or number). */
const probePort = (c: Container, probe: Probe): number =>
  typeof probe.httpGet.port === 'number'
    ? probe.httpGet.port
    : c.ports.find((p) => p.name === probe.httpGet.port)!.containerPort;

/** An agent worker as its health server reads it: 3 slots, one session, warm, maybe draining. */
let draining = false;
const worker = {
  capacity: 3,
  runningSessions: () => 1,
  stopping: () => draining,
  warmProcesses: () => 3,
  warmedUp: () => true,
} as unknown as AgentWorker;
let workerHealth: WorkerHealth;
beforeAll(() => {
  workerHealth = serveWorkerHealth(worker, 0);
});
afterAll(() => workerHealth?.stop());

describe('deploy/helm/likeness', () => {
  test('helm lint and helm template succeed with the default values and the cluster example', () => {
    for (const values of [SCENARIOS.default!, SCENARIOS.cluster!]) runHelm(['lint', '--strict', CHART, ...values]);
    const defaults = render();
    expect(defaults.map((m) => m.kind).sort()).toEqual(
      ['Deployment', 'Deployment', 'PodDisruptionBudget', 'PodDisruptionBudget', 'Secret', 'Service', 'Service'].sort(),
    );
    const cluster = render(SCENARIOS.cluster);
    for (const kind of ['ScaledObject', 'HorizontalPodAutoscaler', 'Ingress', 'ServiceMonitor'])
      expect(cluster.map((m) => m.kind)).toContain(kind);
    // The example keeps its keys in a Secret of its own: the chart makes none, and reads that one.
    expect(cluster.map((m) => m.kind)).not.toContain('Secret');
    const refs = container(cluster, 'api').env.flatMap((e) => e.valueFrom?.secretKeyRef?.name ?? []);
    expect(new Set(refs)).toEqual(new Set(['likeness-keys']));
  });

  test('the API and the agent are Deployments of their own, each running its role of the CLI', () => {
    for (const role of ['api', 'agent'] as const) {
      const [bun, entry, command, flag, which] = container(render(), role).command;
      expect([bun, entry, command, flag]).toEqual(['bun', 'src/cli/index.ts', 'serve', '--role']);
      expect(which).toBe(role);
      expect(ROLES).toContain(which as (typeof ROLES)[number]);
    }
    // The workers reach the API replicas through its Service, on the port the API listens on.
    const manifests = render();
    const api = find(manifests, 'Service', 'likeness-api');
    const port = loadConfig(plainEnv(container(manifests, 'api'))).port;
    expect(plainEnv(container(manifests, 'agent')).INTERNAL_URL).toBe(`http://${api.metadata.name}:${port}`);
    expect(api.spec.ports[0].port).toBe(port);
  });

  test('every variable the chart sets, and every key of its Secret, is one the configuration reads', () => {
    const names = new Set<string>();
    const values = ['--set', 'secrets.DATABASE_URL=postgres://u:p@db/likeness', '--set', 'env.LLM_MODEL=gpt-4o'];
    for (const manifests of [render(values), render(SCENARIOS.cluster)]) {
      for (const role of ['api', 'agent'] as const) for (const e of container(manifests, role).env) names.add(e.name);
      for (const secret of manifests.filter((m) => m.kind === 'Secret'))
        for (const key of Object.keys(secret.stringData ?? {})) names.add(key);
    }
    expect([...names]).toEqual(expect.arrayContaining(['DATABASE_URL', 'LIVEKIT_URL', 'AGENT_DRAIN_SECONDS']));
    const unknown = [...names].filter((name) => !new RegExp(`\\benv\\.${name}\\b|'${name}'`).test(configSource));
    expect(unknown).toEqual([]);
  });

  test('keys come from the Secret under their own names; the workers get none of the control plane’s', () => {
    const manifests = render(['--set', 'secrets.DATABASE_URL=postgres://u:p@db/likeness']);
    const secret = find(manifests, 'Secret', 'likeness-secrets');
    expect(secret.stringData!.DATABASE_URL).toBe('postgres://u:p@db/likeness');
    // Tokens nobody set are generated, not left for each replica to make its own.
    expect(secret.stringData!.ADMIN_TOKEN).toMatch(/^\w{40}$/);
    const api = container(manifests, 'api').env;
    for (const name of ['DATABASE_URL', 'ADMIN_TOKEN', 'METRICS_TOKEN', 'S3_SECRET_ACCESS_KEY', 'LIVEKIT_API_SECRET'])
      expect(api.find((e) => e.name === name)?.valueFrom?.secretKeyRef).toMatchObject({
        name: 'likeness-secrets',
        key: name,
      });
    const agent = container(manifests, 'agent').env.map((e) => e.name);
    expect(agent).toContain('LIVEKIT_API_SECRET');
    expect(agent.filter((name) => (CONTROL_PLANE_SECRETS as readonly string[]).includes(name))).toEqual([]);
  });

  test("the API's probes are its liveness and readiness endpoints, on the port it listens on", async () => {
    const api = container(render(), 'api');
    const port = loadConfig(plainEnv(api)).port;
    for (const probe of [api.startupProbe, api.livenessProbe, api.readinessProbe])
      expect(probePort(api, probe)).toBe(port);
    // The routes of the code: readiness follows the checks, liveness only the process.
    const ask = async (readiness: Readiness, path: string) =>
      (await healthRoutes(readiness).handle(new Request(`http://localhost${path}`))).status;
    const up = new Readiness({ database: async () => {} });
    const down = new Readiness({ database: () => Promise.reject(new Error('unreachable')) });
    expect(await ask(up, api.readinessProbe.httpGet.path)).toBe(200);
    expect(await ask(down, api.readinessProbe.httpGet.path)).toBe(503);
    for (const probe of [api.livenessProbe, api.startupProbe]) expect(await ask(down, probe.httpGet.path)).toBe(200);
  });

  test("the agent's probes are its worker's health server, on the port its settings give", async () => {
    for (const values of Object.values(SCENARIOS)) {
      const agent = container(render(values), 'agent');
      const { healthPort } = loadAgentSettings(plainEnv(agent));
      expect(healthPort).toBeDefined();
      for (const probe of [agent.startupProbe, agent.livenessProbe, agent.readinessProbe])
        expect(probePort(agent, probe)).toBe(healthPort!);
    }
    const agent = container(render(), 'agent');
    const ask = async (path: string) => (await fetch(`${workerHealth.url}${path}`)).status;
    draining = false;
    expect(await ask(agent.readinessProbe.httpGet.path)).toBe(200);
    expect(await ask(agent.livenessProbe.httpGet.path)).toBe(200);
    // Draining: no longer ready (no new work, a rollout waits for its replacement), still alive.
    draining = true;
    expect(await ask(agent.readinessProbe.httpGet.path)).toBe(503);
    expect(await ask(agent.livenessProbe.httpGet.path)).toBe(200);
    draining = false;
  });

  test("the agent pod's grace outlasts the drain its workers are given, whatever the drain", () => {
    const expected: Record<string, number> = { default: 30, cluster: 120, 'drain 120': 120 };
    for (const [scenario, values] of Object.entries(SCENARIOS)) {
      const manifests = render(values);
      const { drainSeconds } = loadAgentSettings(plainEnv(container(manifests, 'agent')));
      expect(drainSeconds).toBe(expected[scenario]!);
      expect(deployment(manifests, 'agent').spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(
        drainSeconds,
      );
    }
    // Even with no margin asked for.
    const tight = render(['--set', 'agent.drainSeconds=45', '--set', 'agent.drainMarginSeconds=0']);
    expect(deployment(tight, 'agent').spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(
      loadAgentSettings(plainEnv(container(tight, 'agent'))).drainSeconds,
    );
  });

  test('a PodDisruptionBudget covers each role', () => {
    const manifests = render();
    for (const role of ['api', 'agent'] as const) {
      const budget = find(manifests, 'PodDisruptionBudget', `likeness-${role}`);
      expect(budget.spec.selector.matchLabels).toEqual(deployment(manifests, role).spec.selector.matchLabels);
    }
  });

  test("KEDA scales the workers on metrics their health server exports, by one worker's slots", async () => {
    expect(render().map((m) => m.kind)).not.toContain('ScaledObject'); // off by default
    const manifests = render(SCENARIOS.cluster);
    const scaled = find(manifests, 'ScaledObject', 'likeness-agent');
    expect(scaled.spec.scaleTargetRef.name).toBe(deployment(manifests, 'agent').metadata.name);
    // KEDA owns the replicas.
    expect(deployment(manifests, 'agent').spec.replicas).toBeUndefined();
    const [trigger] = scaled.spec.triggers;
    expect(trigger.type).toBe('prometheus');
    const query: string = trigger.metadata.query;
    const named = [...new Set(query.match(/\blikeness_\w+/g))];
    expect(named).toContain('likeness_worker_slots_free');
    const exported = await (await fetch(`${workerHealth.url}/metrics`)).text();
    for (const metric of named) expect(exported).toMatch(new RegExp(`^${metric} `, 'm'));
    // The threshold is one worker's slots, as its settings give them.
    expect(Number(trigger.metadata.threshold)).toBe(loadAgentSettings(plainEnv(container(manifests, 'agent'))).maxJobs);
    // The series it selects are those Prometheus scrapes from the agent Service, in its namespace.
    const service = find(manifests, 'Service', 'likeness-agent');
    expect(query).toContain(`job="${service.metadata.name}"`);
    expect(query).toContain('namespace="avatars"');
    const monitor = find(manifests, 'ServiceMonitor', 'likeness-agent');
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    expect(monitor.spec.endpoints[0]).toMatchObject({ port: service.spec.ports[0].name, path: '/metrics' });
  });
});
