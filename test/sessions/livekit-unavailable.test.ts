// When LiveKit does not answer: start answers 500 and leaves nothing behind; end answers
// 502 and keeps the session running, and once LiveKit is back the retried end completes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connectLivekit } from '../../src/livekit/connection.ts';
import { LocalLivekitServer, livekitBinary } from '../../src/livekit/index.ts';
import type { IdentityBody } from '../support/forms.ts';
import { tempDir } from '../support/processes.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { createIdentity, postSessionStart } from '../support/session-start.ts';

describe('LiveKit unavailable', () => {
  const dirs: string[] = [];
  let livekit: LocalLivekitServer;
  let livekitDir: string;
  let service: TestService;
  let account: TestAccount;
  let identity: IdentityBody;

  const startLivekit = (port?: number) =>
    LocalLivekitServer.start({ binary: livekitBinary(), dataDir: livekitDir, port });
  const start = () => postSessionStart(account, { identity_id: identity.identity_id });

  beforeAll(async () => {
    livekitDir = await tempDir(dirs, 'likeness-livekit-');
    livekit = await startLivekit();
    const connection = connectLivekit({
      url: livekit.url,
      publicUrl: livekit.url,
      apiKey: livekit.apiKey,
      apiSecret: livekit.apiSecret,
    });
    service = await startTestService('pglite', {
      overrides: { livekit: connection },
      env: { CREDITS_ONBOARDING: '0', CREDITS_PER_AVATAR_MINUTE: '10' },
    });
    account = await service.account({ credits: 100 });
    identity = await createIdentity(account, { language: 'en' });
  });
  afterAll(async () => {
    await service.stop();
    await livekit.stop();
  });

  test('start answers 500 and leaves no session and no hold; end answers 502; a retry after recovery completes', async () => {
    const running = await start();
    expect(running.status).toBe(200);
    const session = (await running.json()) as { room_name: string };
    expect(await service.services.ledger.balance(account.accountId)).toBe(90);

    const port = Number(new URL(livekit.url).port);
    await livekit.stop();

    const refused = await start();
    expect(refused.status).toBe(500);
    expect(await refused.json()).toEqual({ detail: expect.any(String) });
    const sessions = (await (await account.call('GET', '/v1/sessions')).json()) as { session_id: string }[];
    expect(sessions.map((s) => s.session_id)).toEqual([session.room_name]);
    expect(await service.services.ledger.balance(account.accountId)).toBe(90);

    const unconfirmed = await account.call('POST', `/v1/sessions/${session.room_name}/end`);
    expect(unconfirmed.status).toBe(502);
    expect(await unconfirmed.json()).toEqual({ detail: expect.any(String) });
    expect(((await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as any).status).toBe(
      'running',
    );

    const readiness = await service.call('GET', '/readyz');
    expect(readiness.status).toBe(503);

    livekit = await startLivekit(port);
    const retried = await account.call('POST', `/v1/sessions/${session.room_name}/end`);
    expect(retried.status).toBe(200);
    expect(((await retried.json()) as any).metadata.end_reason).toBe('ended_by_api');
    expect(await service.services.ledger.balance(account.accountId)).toBe(100);
    expect((await service.call('GET', '/readyz')).status).toBe(200);
  }, 60_000);
});

describe('an external LiveKit (LIVEKIT_URL)', () => {
  const dirs: string[] = [];
  let external: LocalLivekitServer;
  let service: TestService;
  beforeAll(async () => {
    external = await LocalLivekitServer.start({
      binary: livekitBinary(),
      dataDir: await tempDir(dirs, 'likeness-external-'),
    });
    service = await startTestService('pglite', {
      livekit: 'local', // no override: the service reads LIVEKIT_* like a deployment would
      env: {
        LIVEKIT_URL: external.url,
        LIVEKIT_API_KEY: external.apiKey,
        LIVEKIT_API_SECRET: external.apiSecret,
        LIVEKIT_PUBLIC_URL: 'wss://rtc.example.com',
      },
    });
  });
  afterAll(async () => {
    await service.stop();
    await external.stop();
  });

  test('is used instead of a local server, and clients get LIVEKIT_PUBLIC_URL as rtc_url', async () => {
    expect(service.services.localLivekit).toBeUndefined();
    const account = await service.account();
    const response = await account.call('POST', '/v1/sessions/start', {
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(200);
    const started = (await response.json()) as { room_name: string; rtc_url: string };
    expect(started.rtc_url).toBe('wss://rtc.example.com');
    const rooms = await connectLivekit({
      url: external.url,
      publicUrl: external.url,
      apiKey: external.apiKey,
      apiSecret: external.apiSecret,
    }).rooms.listRooms();
    expect(rooms.map((r) => r.name)).toContain(started.room_name);
  });
});
