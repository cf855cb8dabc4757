// A stopping API process (SIGTERM) takes no new connections but finishes the requests in
// flight (docs/api.md#health): an identity create under way when the stop begins completes.
import { expect, test } from 'bun:test';
import { identityForm } from '../support/forms.ts';
import { startTestService } from '../support/service.ts';

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
