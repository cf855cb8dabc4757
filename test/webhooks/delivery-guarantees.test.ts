// What the webhook outbox promises beyond a happy receiver: a retry series survives a restart
// of the service (same `webhook-id`), two API processes on one Postgres send each message
// once, a failed retrain is reported, and private destinations are refused when saved and
// again at delivery (a name that resolves elsewhere later).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createAstronaut } from '../avatar/support.ts';
import * as fx from '../fixtures/index.ts';
import { storeLosingUploads } from '../support/fakes/asset-store.ts';
import { file, identityForm } from '../support/forms.ts';
import { startTestService, type TestService, waitForStatus } from '../support/service.ts';
import { addWebhook, json, latestDelivery, WebhookReceiver } from '../support/webhooks.ts';

const receiver = new WebhookReceiver();
afterAll(() => receiver.stop());

describe('a retry series across a restart', () => {
  test('the service stops after a failed attempt; started again on its data, it delivers the same message', async () => {
    const env = { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_RETRY_SECONDS: '3,3', WEBHOOKS_POLL_MS: '100' };
    const first = await startTestService('pglite', { env });
    const account = await first.account();
    receiver.script.set('/restart', [500, 200]);
    const endpoint = await addWebhook(account, { url: receiver.url('/restart'), events: ['session.ended'] });
    await account.call('POST', `/v1/webhooks/${endpoint.webhook_id}/test`);
    await receiver.waitFor('the first attempt', () => receiver.on('/restart').length === 1);
    await Bun.sleep(200);
    await first.stopKeepingData();

    const second = await startTestService('pglite', { env, dataDir: first.dataDir });
    try {
      const again = {
        ...account,
        call: (method: string, path: string, init: { body?: BodyInit; headers?: Record<string, string> } = {}) =>
          second.call(method, path, {
            ...init,
            headers: { authorization: `Bearer ${account.apiKey}`, ...init.headers },
          }),
      };
      const delivered = await latestDelivery(again, endpoint.webhook_id, 'delivered');
      expect(delivered).toMatchObject({ attempts: 2, response_status: 200 });
      const ids = receiver.on('/restart').map((r) => r.headers['webhook-id']);
      expect(ids).toEqual([delivered.message_id, delivered.message_id]);
      expect(receiver.verified('/restart', endpoint.secret!).map((e) => e.type)).toEqual([
        'webhook.test',
        'webhook.test',
      ]);
    } finally {
      await second.stop();
    }
  }, 60_000);
});

describe('two API processes on one Postgres', () => {
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    const env = { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_POLL_MS: '50' };
    a = await startTestService('postgres', { env });
    b = await startTestService('postgres', { env, databaseUrl: a.config.databaseUrl });
  }, 60_000);
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  test('send each of 30 messages once, whichever process wrote it', async () => {
    const account = await a.account();
    const endpoint = await addWebhook(account, { url: receiver.url('/replicas'), events: ['session.ended'] });
    const viaB = (path: string) => b.call('POST', path, { headers: { authorization: `Bearer ${account.apiKey}` } });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (i % 2 ? viaB : (p: string) => account.call('POST', p))(`/v1/webhooks/${endpoint.webhook_id}/test`),
      ),
    );
    expect(answers.every((r) => r.status === 202)).toBe(true);
    await receiver.waitFor('30 messages', () => receiver.on('/replicas').length >= 30);
    await Bun.sleep(500);
    const ids = receiver.on('/replicas').map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
  }, 60_000);
});

describe('a failed retrain', () => {
  let service: TestService;
  // Loses the retrain's stored upload when told to: the retrain fails after its 202.
  let uploads: Awaited<ReturnType<typeof storeLosingUploads>>;
  beforeAll(async () => {
    uploads = await storeLosingUploads();
    service = await startTestService('pglite', {
      overrides: { store: uploads.store },
      env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_POLL_MS: '100' },
    });
  });
  afterAll(() => service.stop());

  test('sends identity.training_failed with the detail the identity shows; a retrain that works sends identity.ready', async () => {
    const account = await service.account();
    const endpoint = await addWebhook(account, {
      url: receiver.url('/training'),
      events: ['identity.ready', 'identity.training_failed'],
    });
    const identity = await createAstronaut(account, { name: 'Grace' });
    const retrain = async () => {
      const form = await identityForm({ prompt: 'Again.', image: file(fx.portraitPng(), 'new.png') });
      form.delete('name');
      expect((await account.call('PATCH', `/v1/identities/${identity.identity_id}`, { body: form })).status).toBe(202);
      await waitForStatus(account, identity.identity_id, 'ready');
    };
    uploads.losing = true;
    try {
      await retrain();
    } finally {
      uploads.losing = false;
    }
    const failed = await receiver.waitFor('identity.training_failed', () =>
      receiver.verified('/training', endpoint.secret!).find((e) => e.type === 'identity.training_failed'),
    );
    const shown = (await (await account.call('GET', `/v1/identities/${identity.identity_id}`)).json()) as {
      detail: string;
    };
    expect(failed.data).toEqual({ identity_id: identity.identity_id, name: 'Grace', detail: shown.detail });
    await retrain();
    await receiver.waitFor('identity.ready after the retrain', () =>
      receiver.verified('/training', endpoint.secret!).find((e) => e.type === 'identity.ready' && e.data.retrained),
    );
    expect(receiver.verified('/training', endpoint.secret!).map((e) => [e.type, e.data.retrained])).toEqual([
      ['identity.ready', false],
      ['identity.training_failed', undefined],
      ['identity.ready', true],
    ]);
  }, 60_000);
});

describe('private destinations', () => {
  let service: TestService;
  // A name that points at a public address when the endpoint is saved, and at loopback later.
  let rebound = false;
  const names: Record<string, () => string[]> = {
    'hooks.example.com': () => ['93.184.216.34'],
    'intranet.example.com': () => ['10.1.2.3'],
    'mixed.example.com': () => ['93.184.216.34', '192.168.0.7'],
    'rebind.example.com': () => (rebound ? ['127.0.0.1'] : ['93.184.216.34']),
  };
  beforeAll(async () => {
    service = await startTestService('pglite', {
      env: { WEBHOOKS_RETRY_SECONDS: '60', WEBHOOKS_POLL_MS: '100' },
      overrides: {
        webhookResolver: async (host) => {
          const answer = names[host]?.();
          if (!answer) throw new Error(`ENOTFOUND ${host}`);
          return answer;
        },
      },
    });
  });
  afterAll(() => service.stop());

  test('loopback, private, link-local and unresolvable hosts are refused when saved (422, url_not_allowed)', async () => {
    const account = await service.account();
    const refused = [
      receiver.url('/private'),
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://10.0.0.5/hook',
      'http://192.168.1.10/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://100.64.0.1/hook',
      'http://0.0.0.0/hook',
      'https://intranet.example.com/hook',
      'https://mixed.example.com/hook',
      'https://nowhere.example.com/hook',
    ];
    for (const url of refused) {
      const answer = await account.call('POST', '/v1/webhooks', json({ url, events: ['session.ended'] }));
      expect(answer.status, url).toBe(422);
      const [problem] = ((await answer.json()) as { detail: { loc: string[]; msg: string; type: string }[] }).detail;
      expect(problem).toMatchObject({ loc: ['body', 'url'], type: 'url_not_allowed' });
    }
    const allowed = await addWebhook(account, { url: 'https://hooks.example.com/likeness', events: ['session.ended'] });
    // A change of URL is checked the same way.
    const moved = await account.call(
      'PATCH',
      `/v1/webhooks/${allowed.webhook_id}`,
      json({ url: 'http://127.0.0.1:9/x' }),
    );
    expect(moved.status).toBe(422);
    expect(
      ((await (await account.call('GET', '/v1/webhooks')).json()) as { webhooks: { url: string }[] }).webhooks.map(
        (w) => w.url,
      ),
    ).toEqual(['https://hooks.example.com/likeness']);
  });

  test('checked again at delivery: a name that now resolves to loopback is not called', async () => {
    const account = await service.account();
    const endpoint = await addWebhook(account, {
      url: `http://rebind.example.com:${new URL(receiver.url('/')).port}/rebind`,
      events: ['session.ended'],
    });
    rebound = true;
    await account.call('POST', `/v1/webhooks/${endpoint.webhook_id}/test`);
    const deadline = Date.now() + 10_000;
    let delivery: { attempts: number; last_error: string | null; status: string } | undefined;
    while (Date.now() < deadline && !delivery?.attempts) {
      delivery = (
        (await (await account.call('GET', `/v1/webhooks/${endpoint.webhook_id}/deliveries`)).json()) as {
          deliveries: (typeof delivery)[];
        }
      ).deliveries[0];
      await Bun.sleep(100);
    }
    expect(delivery).toMatchObject({
      attempts: 1,
      status: 'pending',
      last_error:
        'refused: rebind.example.com does not resolve to a public address (a name must resolve only to public ones: not private, loopback, link-local or reserved)',
    });
    expect(receiver.on('/rebind')).toHaveLength(0);
  });
});
