// Scaling out: `likeness serve --role api` answers the API without taking agent jobs, and a
// separate `--role agent` process takes them, both on one external LiveKit.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { RoomServiceClient } from 'livekit-server-sdk';
import { LocalLivekitServer, livekitBinary } from '../../src/livekit/index.ts';
import { seededDataDir } from '../support/database-templates.ts';
import { drain, readUntil, tempDir } from '../support/processes.ts';
import { eventually, joinAsVisitor } from '../support/visitor.ts';

const CLI = join(import.meta.dir, '../../src/cli/index.ts');

describe('serve --role', () => {
  const dirs: string[] = [];
  const children: Subprocess[] = [];
  let livekit: LocalLivekitServer;
  let livekitEnv: Record<string, string>;

  const serve = (role: string, env: Record<string, string>) => {
    const child = Bun.spawn(['bun', CLI, 'serve', '--role', role], {
      env: { ...process.env, HOST: '127.0.0.1', ...env },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    children.push(child);
    return child;
  };

  beforeAll(async () => {
    livekit = await LocalLivekitServer.start({
      binary: livekitBinary(),
      dataDir: await tempDir(dirs, 'likeness-roles-livekit-'),
    });
    livekitEnv = { LIVEKIT_URL: livekit.url, LIVEKIT_API_KEY: livekit.apiKey, LIVEKIT_API_SECRET: livekit.apiSecret };
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => c.exited));
    await livekit.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('an api-only process takes no agent jobs; an agent-only process does', async () => {
    const port = String(20000 + Math.floor(Math.random() * 20000));
    const apiDir = await seededDataDir(dirs, 'likeness-roles-api-');
    const api = serve('api', { ...livekitEnv, DATA_DIR: apiDir, PORT: port });
    await readUntil(api.stdout, 'listening');
    drain(api.stdout);
    drain(api.stderr);
    const baseUrl = `http://127.0.0.1:${port}`;
    const adminToken = (await Bun.file(join(apiDir, 'admin-token')).text()).trim();
    const created = (await (
      await fetch(`${baseUrl}/internal/admin/accounts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'roles@example.com', credits: 100 }),
      })
    ).json()) as { api_key: string };
    const call = () =>
      fetch(`${baseUrl}/v1/sessions/start`, {
        method: 'POST',
        headers: { authorization: `Bearer ${created.api_key}`, 'content-type': 'application/json' },
        body: '{}',
      });
    const start = async () => (await (await call()).json()) as { room_name: string; token: string; rtc_url: string };

    // No agent worker anywhere: the API process admits no session (no room, no row).
    const refused = await call();
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(((await refused.json()) as { detail: string }).detail).toContain('No agent worker');
    expect(
      await new RoomServiceClient(livekit.url.replace(/^ws/, 'http'), livekit.apiKey, livekit.apiSecret).listRooms(),
    ).toEqual([]);

    // A worker in another process reports to the API process (INTERNAL_URL): now sessions start.
    const agent = serve('agent', {
      ...livekitEnv,
      DATA_DIR: await tempDir(dirs, 'likeness-roles-agent-'),
      INTERNAL_URL: baseUrl,
    });
    await readUntil(agent.stdout, 'agent worker registered');
    drain(agent.stdout);
    drain(agent.stderr);
    const session = await start();
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    await eventually(() => visitor.agent(), 20_000, 'the agent from the agent-only process');
    // Ended here, not left running: a running session holds the agent process's drain on
    // SIGTERM for AGENT_DRAIN_SECONDS (30 s) at the end of the suite.
    const ended = await fetch(`${baseUrl}/v1/sessions/${session.room_name}/end`, {
      method: 'POST',
      headers: { authorization: `Bearer ${created.api_key}` },
    });
    expect(ended.status).toBe(200);
    await visitor.leave();
  }, 90_000);

  test('an agent-only process needs LIVEKIT_URL; an unknown role is a usage error', async () => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      DATA_DIR: await tempDir(dirs, 'likeness-roles-bad-'),
    };
    delete env.LIVEKIT_URL;
    const noLivekit = Bun.spawn(['bun', CLI, 'serve', '--role', 'agent'], { env, stdout: 'pipe', stderr: 'pipe' });
    expect(await noLivekit.exited).toBe(1);
    expect(await new Response(noLivekit.stderr).text()).toContain('LIVEKIT_URL');
    const bogus = Bun.spawn(['bun', CLI, 'serve', '--role', 'everything'], { env, stdout: 'pipe', stderr: 'pipe' });
    expect(await bogus.exited).toBe(2);
  });
});
