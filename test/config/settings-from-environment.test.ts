// The one typed configuration module: embedded defaults, derived addresses, bad values refused.
import { describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { hostAddress, loadConfig } from '../../src/config.ts';
import { reservedSlots } from '../../src/workers/admission.ts';

describe('configuration', () => {
  test("embedded defaults: port 8080 on every interface, PUBLIC_URL at the host's network address, ./data, PGlite, local assets under PUBLIC_URL/assets", () => {
    const config = loadConfig({});
    const here = `http://${hostAddress() ?? 'localhost'}:8080`;
    expect(config.port).toBe(8080);
    expect(config.host).toBe('0.0.0.0');
    expect(config.publicUrl).toBe(here);
    expect(config.assetsUrl).toBe(`${here}/assets`);
    expect(config.dataDir).toBe(resolve('./data'));
    expect(config.databaseUrl).toBeUndefined();
    expect(config.s3).toBeUndefined();
  });

  test("every route's handler is compiled at start unless PRECOMPILE_ROUTES=false (the suites' services)", () => {
    expect(loadConfig({}).precompileRoutes).toBe(true);
    expect(loadConfig({ PRECOMPILE_ROUTES: 'false' }).precompileRoutes).toBe(false);
  });

  test('every account gets the default limits unless LIMIT_* say otherwise (0: none)', () => {
    expect(loadConfig({}).limits).toEqual({
      concurrent_sessions: 10,
      session_starts_per_minute: 20,
      concurrent_identity_creates: 3,
      identity_creates_per_hour: 60,
    });
    expect(loadConfig({ LIMIT_CONCURRENT_SESSIONS: '0', LIMIT_IDENTITY_CREATES_PER_HOUR: '5' }).limits).toMatchObject({
      concurrent_sessions: 0,
      identity_creates_per_hour: 5,
    });
    expect(() => loadConfig({ LIMIT_SESSION_STARTS_PER_MINUTE: '-1' })).toThrow('LIMIT_SESSION_STARTS_PER_MINUTE');
  });

  test("admission's fair share keeps 20 % of the agent slots, rounded up, for accounts that run none (0: off; at most 90 %)", () => {
    expect(loadConfig({}).sessions.reservedPercent).toBe(20);
    expect(loadConfig({ SESSION_RESERVED_PERCENT: '0' }).sessions.reservedPercent).toBe(0);
    expect(loadConfig({ SESSION_RESERVED_PERCENT: '100' }).sessions.reservedPercent).toBe(90);
    expect([3, 10, 100, 0].map((capacity) => reservedSlots(capacity, 20))).toEqual([1, 2, 20, 0]);
    expect(() => loadConfig({ SESSION_RESERVED_PERCENT: '-5' })).toThrow('SESSION_RESERVED_PERCENT');
  });

  test('self-service sign-up is on unless SIGNUP=off; per-address limits count IPv6 by /64 unless LIMIT_IPV6_PREFIX says', () => {
    expect(loadConfig({}).console).toMatchObject({ signUp: true, limitIpv6Prefix: 64 });
    expect(loadConfig({ SIGNUP: 'off', LIMIT_IPV6_PREFIX: '56' }).console).toMatchObject({
      signUp: false,
      limitIpv6Prefix: 56,
    });
    expect(() => loadConfig({ SIGNUP: 'maybe' })).toThrow('SIGNUP');
    for (const bad of ['0', '129', '64.5'])
      expect(() => loadConfig({ LIMIT_IPV6_PREFIX: bad })).toThrow('LIMIT_IPV6_PREFIX');
  });

  test('ASSETS_URL follows PUBLIC_URL unless set; trailing slashes are dropped', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://api.example.com/' }).assetsUrl).toBe('https://api.example.com/assets');
    expect(
      loadConfig({ PUBLIC_URL: 'https://api.example.com', ASSETS_URL: 'https://cdn.example.com/x/' }).assetsUrl,
    ).toBe('https://cdn.example.com/x');
  });

  test('S3 settings switch the asset store to S3', () => {
    const config = loadConfig({ S3_BUCKET: 'b', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_PREFIX: 'prod/' });
    expect(config.s3).toMatchObject({ bucket: 'b', endpoint: 'http://127.0.0.1:9000', prefix: 'prod/' });
  });

  test('malformed numbers are refused at start with the variable named', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow('PORT');
    expect(() => loadConfig({ CREDITS_ONBOARDING: '-5' })).toThrow('CREDITS_ONBOARDING');
  });

  test("the local LiveKit's media: the host's address, UDP 50000-50099 and ICE/TCP 7881 by default; loopback-only when HOST or LIVEKIT_NODE_IP is", () => {
    const address = hostAddress();
    expect(loadConfig({}).livekit.media).toEqual(
      address
        ? { nodeIp: address, udpPorts: { start: 50_000, end: 50_099 }, tcpPort: 7881 }
        : { nodeIp: '127.0.0.1', udpPorts: undefined, tcpPort: 0 },
    );
    expect(
      loadConfig({ LIVEKIT_NODE_IP: '203.0.113.7', LIVEKIT_UDP_PORTS: '40000 - 40199', LIVEKIT_TCP_PORT: '0' }).livekit
        .media,
    ).toEqual({
      nodeIp: '203.0.113.7',
      udpPorts: { start: 40_000, end: 40_199 },
      tcpPort: 0,
    });
    for (const env of [{ HOST: '127.0.0.1' }, { LIVEKIT_NODE_IP: '127.0.0.1' }]) {
      const config = loadConfig(env);
      expect(config.livekit.media).toEqual({ nodeIp: '127.0.0.1', udpPorts: undefined, tcpPort: 0 });
      expect(config.publicUrl).toBe('http://localhost:8080');
    }
    expect(() => loadConfig({ LIVEKIT_UDP_PORTS: '50099-50000' })).toThrow('LIVEKIT_UDP_PORTS');
    expect(() => loadConfig({ LIVEKIT_UDP_PORTS: '80' })).toThrow('LIVEKIT_UDP_PORTS');
  });

  test('rtc_url follows PUBLIC_URL (ws for http, wss for https), whichever LiveKit, unless LIVEKIT_PUBLIC_URL says otherwise', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://likeness.example.com' }).livekit.publicUrl).toBe(
      'wss://likeness.example.com',
    );
    expect(loadConfig({ PUBLIC_URL: 'http://10.1.2.3:8080/' }).livekit.publicUrl).toBe('ws://10.1.2.3:8080');
    expect(loadConfig({ LIVEKIT_NODE_IP: '10.1.2.3' }).livekit.publicUrl).toBe('ws://10.1.2.3:8080');
    expect(
      loadConfig({ PUBLIC_URL: 'https://likeness.example.com', LIVEKIT_PUBLIC_URL: 'wss://rtc.example.com' }).livekit
        .publicUrl,
    ).toBe('wss://rtc.example.com');
    // All on loopback, no PUBLIC_URL: the local server's own address (decided at its start).
    expect(loadConfig({ HOST: '127.0.0.1' }).livekit.publicUrl).toBeUndefined();
    // An external LiveKit too: its signalling comes through this service's /rtc.
    expect(
      loadConfig({ PUBLIC_URL: 'https://likeness.example.com', LIVEKIT_URL: 'wss://lk.example.com' }).livekit.publicUrl,
    ).toBe('wss://likeness.example.com');
    // ...unless all on loopback without a PUBLIC_URL: then LIVEKIT_URL itself (decided at start).
    expect(loadConfig({ HOST: '127.0.0.1', LIVEKIT_URL: 'ws://127.0.0.1:7880' }).livekit.publicUrl).toBeUndefined();
  });
});
