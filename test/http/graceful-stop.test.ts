// A stopping API process (SIGTERM) takes no new connections but finishes the requests in
// flight (docs/api.md#health): an identity create under way when the stop begins completes,
// and the visitors' signalling connections, which last their sessions, are closed.
import { expect, test } from 'bun:test';
import { ConnectionState } from '@livekit/rtc-node';
import { type IdentityBody, identityForm } from '../support/forms.ts';
import { startTestService } from '../support/service.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';

test('a create in flight when the service stops completes; a request after the stop is refused', async () => {
  const service = await startTestService('pglite', { env: { CREDITS_ONBOARDING: '0' } });
  const account = await service.account();
  const body = await identityForm({ language: 'en' });
  let stopped = false;
  try {
    const inFlight = account.call('POST', '/v1/identities', { body });
    // The request reaches the server, then the stop begins while it trains.
    await Bun.sleep(30);
    const stopping = service.stop().then(() => (stopped = true));
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { status: string }).status).toBe('ready');
    await stopping;
    expect(
      await fetch(`${service.url}/healthz`).then(
        () => 'answered',
        () => 'refused',
      ),
    ).toBe('refused');
  } finally {
    if (!stopped) await service.stop();
  }
}, 60_000);

test("a visitor's signalling through /rtc does not hold the stop: it is closed, going away", async () => {
  const service = await startTestService('pglite', { livekit: 'local', env: { CREDITS_ONBOARDING: '0' } });
  const account = await service.account({ credits: 1_000 });
  let stopped = false;
  try {
    const identity = (await (
      await account.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) })
    ).json()) as IdentityBody;
    const started = await account.call('POST', '/v1/sessions/start', {
      body: JSON.stringify({ identity_id: identity.identity_id, avatar_enabled: false }),
      headers: { 'content-type': 'application/json' },
    });
    expect(started.status).toBe(200);
    const session = (await started.json()) as StartedSession;
    // The visitor's signalling through this service's port, as with a PUBLIC_URL (on loopback
    // without one, rtc_url is LiveKit's own address). No agent is needed for that.
    const visitor = await joinAsVisitor({ ...session, rtc_url: service.url.replace(/^http/, 'ws') });
    expect(service.services.signalling.size).toBe(1);
    // Bun's graceful stop waits for every open WebSocket: unclosed, this one held it for the session.
    const stop = service.stop().then(() => (stopped = true));
    expect(await Promise.race([stop, Bun.sleep(20_000).then(() => 'still stopping')])).toBe(true);
    expect(service.services.signalling.size).toBe(0);
    // The client heard it: it reconnects (to another API process, where there is one) or gives up.
    await eventually(
      () => visitor.room.connectionState !== ConnectionState.CONN_CONNECTED,
      10_000,
      'the client to hear',
    );
    await visitor.leave().catch(() => undefined);
  } finally {
    if (!stopped) await service.stop();
  }
}, 60_000);
