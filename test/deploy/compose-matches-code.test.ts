// The deployment files are copied by operators, so they must not drift from the code
// (docs/api.md#health; README "Deploy"). No container engine runs here: these checks read the
// files, and test/cluster starts the same topology as processes, with compose's environment.
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROLES } from '../../src/cli/index.ts';
import { DEFAULT_ICE_TCP_PORT, DEFAULT_TLS_PORT, DEFAULT_UDP_PORTS } from '../../src/config.ts';
import { configYaml, PLI_THROTTLE_MS } from '../../src/livekit/local-files.ts';
import { compose, composeService, likenessServices } from '../cluster/compose.ts';
import { configSource as readConfigSource } from './config-source.ts';

const ROOT = join(import.meta.dir, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const configSource = readConfigSource();
/** The LiveKit version the bootstrap builds (src/bootstrap/livekit.mjs, plain Node, untyped). */
const LIVEKIT_SERVER_TAG = /LIVEKIT_SERVER_TAG = ['"](v[\d.]+)['"]/.exec(read('src/bootstrap/livekit.mjs'))![1]!;

describe('deploy/compose.yaml', () => {
  test('every variable it sets for Likeness is one src/config.ts reads', () => {
    const names = [...new Set(likenessServices().flatMap((service) => Object.keys(service.environment)))].sort();
    expect(names).toContain('DATABASE_URL');
    expect(names).toContain('LIVEKIT_URL');
    const unknown = names.filter((name) => !new RegExp(`\\benv\\.${name}\\b|'${name}'`).test(configSource));
    expect(unknown).toEqual([]);
  });

  test('its Likeness services run CLI commands that exist, one API and one agent role', () => {
    const services = likenessServices();
    expect(services.map((s) => s.name).sort()).toEqual(['agent', 'api']);
    for (const service of services) {
      const [bun, entry, command, flag, role] = service.command!;
      expect([bun, entry, command, flag]).toEqual(['bun', 'src/cli/index.ts', 'serve', '--role']);
      expect(ROLES).toContain(role as (typeof ROLES)[number]);
    }
    expect(composeService('api').command!.at(-1)).toBe('api');
    expect(composeService('agent').command!.at(-1)).toBe('agent');
    // Their health checks are the CLI's own command, on the ports their settings give.
    const { raw } = compose();
    const healthCheckOn = (port: string | undefined) => [
      'CMD',
      'bun',
      'src/cli/index.ts',
      'health',
      `http://127.0.0.1:${port}/readyz`,
    ];
    expect(raw.services.api.healthcheck.test).toEqual(healthCheckOn(composeService('api').environment.PORT));
    expect(raw.services.agent.healthcheck.test).toEqual(
      healthCheckOn(composeService('agent').environment.AGENT_HEALTH_PORT),
    );
  });

  test('its Postgres has pgvector, which the documents migration uses where it exists', () => {
    const { raw } = compose();
    expect(raw.services.postgres.image).toMatch(/^pgvector\/pgvector:pg\d+$/);
    const migration = read('drizzle/0016_tools_and_knowledge.sql');
    expect(migration).toContain("pg_available_extensions WHERE name = 'vector'");
    expect(migration).toContain('USING hnsw (embedding_vector vector_ip_ops)');
  });

  test('LiveKit is the official image of the version the bootstrap builds, on the ports the service documents', () => {
    const { raw } = compose();
    expect(raw.services.livekit.image).toBe(`livekit/livekit-server:${LIVEKIT_SERVER_TAG}`);
    expect(raw.services.livekit.ports).toEqual([
      `${DEFAULT_ICE_TCP_PORT}:${DEFAULT_ICE_TCP_PORT}/tcp`,
      `${DEFAULT_UDP_PORTS.start}-${DEFAULT_UDP_PORTS.end}:${DEFAULT_UDP_PORTS.start}-${DEFAULT_UDP_PORTS.end}/udp`,
    ]);
    const livekit = Bun.YAML.parse(read('deploy/livekit.yaml')) as Record<string, any>;
    expect(livekit.rtc).toMatchObject({
      tcp_port: DEFAULT_ICE_TCP_PORT,
      port_range_start: DEFAULT_UDP_PORTS.start,
      port_range_end: DEFAULT_UDP_PORTS.end,
    });
    expect(livekit.redis.address).toBe('redis:6379');
    // The keyframe-request throttle of the embedded server (a visitor's first frame comes sooner).
    const embedded = Bun.YAML.parse(
      configYaml({
        apiKey: 'k',
        apiSecret: 's',
        host: '127.0.0.1',
        port: 7880,
        rtc: { nodeIp: '127.0.0.1', start: 50000, end: 50010, tcpPort: 0 },
      }),
    ) as Record<string, any>;
    const throttle = `${PLI_THROTTLE_MS}ms`;
    expect(embedded.rtc.pli_throttle).toEqual({ low_quality: throttle, mid_quality: throttle, high_quality: throttle });
    expect(livekit.rtc.pli_throttle).toEqual(embedded.rtc.pli_throttle);
    expect(livekit.room.auto_create).toBe(false);
    // Webhooks signed with the key the Likeness services hold, posted where the API takes them.
    expect(livekit.webhook.api_key).toBe(composeService('api').environment.LIVEKIT_API_KEY);
    expect(livekit.webhook.urls).toEqual([
      `${composeService('api').environment.INTERNAL_URL}/internal/livekit/webhook`,
    ]);
    expect(String(raw.services.livekit.environment.LIVEKIT_KEYS)).toStartWith(
      `${composeService('api').environment.LIVEKIT_API_KEY}:`,
    );
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const lines = dockerfile.split('\n').filter((line) => line && !line.startsWith('#'));
  const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));

  test('slow layers before the code: packages, models, LiveKit and dependencies come before src/', () => {
    const code = at(/^COPY src \.\/src/);
    expect(code).toBeGreaterThan(0);
    for (const slow of [/apt-get install/, /models\.mjs/, /--from=livekit/, /bun install --frozen-lockfile/]) {
      expect(at(slow)).toBeGreaterThan(-1);
      expect(at(slow)).toBeLessThan(code);
    }
    expect(read('.dockerignore').split('\n')).toEqual(expect.arrayContaining(['node_modules', 'data', 'test', '.git']));
  });

  test('a user of its own, an init process, a health check, the ports of npm start', () => {
    const user = lines.find((line) => line.startsWith('USER '));
    expect(user).toBeDefined();
    expect(user).not.toMatch(/root|\b0\b/);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
    expect(dockerfile).toMatch(
      /^HEALTHCHECK .*"src\/cli\/index\.ts", "health", "http:\/\/127\.0\.0\.1:8080\/readyz"\]$/m,
    );
    expect(dockerfile).toMatch(
      new RegExp(
        `^EXPOSE 8080 ${DEFAULT_TLS_PORT} ${DEFAULT_ICE_TCP_PORT} ${DEFAULT_UDP_PORTS.start}-${DEFAULT_UDP_PORTS.end}/udp$`,
        'm',
      ),
    );
    expect(dockerfile).toMatch(new RegExp(`livekit-server/cmd/server@${LIVEKIT_SERVER_TAG.replaceAll('.', '\\.')}`));
    expect(dockerfile).toMatch(/^CMD \["bun", "src\/cli\/index\.ts", "serve"\]$/m);
  });
});
