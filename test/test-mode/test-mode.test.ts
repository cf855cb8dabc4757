// Test mode (issue 34 point 2; docs/api.md#test-mode) on both engines, over a real LiveKit: a
// test key (`lk_test_…`, from the CLI's operations or the console) makes identities and sessions
// that cost no credits, sessions that end after the short test maximum with "test" in their
// dispatch (the video's mark), `test: true` in every read and webhook; a test key never reads or
// uses a live key's resources, nor the reverse; the same request behaves the same otherwise.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { isTestAccount } from '../../src/accounts/test-mode.ts';
import { creditLedger } from '../../src/credits/schema.ts';
import { ConsoleClient, uniqueEmail } from '../console/support.ts';
import { type IdentityBody, identityForm } from '../support/forms.ts';
import { dispatchedTo } from '../support/job-session.ts';
import { ENGINES, type TestAccount } from '../support/service.ts';
import { suiteService } from '../support/suite-service.ts';
import { json, WebhookReceiver } from '../support/webhooks.ts';

const TEST_MAX_SECONDS = 90;

describe.each(ENGINES)('test mode on %s', (engine) => {
  const suite = suiteService(engine, {
    livekit: 'local',
    env: {
      CREDITS_ONBOARDING: '50',
      CREDITS_PER_AVATAR_MINUTE: '10',
      SESSION_TEST_MAX_DURATION_SECONDS: String(TEST_MAX_SECONDS),
      WEBHOOKS_ALLOW_PRIVATE: 'true',
    },
  });
  let live: TestAccount;
  let sandbox: TestAccount;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    live = await suite.service.account({ credits: 1000 });
    const issued = await suite.service.services.operations.createKey({
      account_id: live.accountId,
      name: 'ci',
      test: true,
    });
    expect(issued.api_key).toMatch(/^lk_test_[0-9A-Za-z]{43}$/);
    expect(issued.test).toBe(true);
    sandbox = {
      accountId: 'unknown',
      apiKey: issued.api_key,
      call: (method, path, init = {}) =>
        suite.service.call(method, path, {
          ...init,
          headers: { authorization: `Bearer ${issued.api_key}`, ...init.headers },
        }),
    };
  });
  afterAll(() => receiver.stop());

  const liveBalance = () => suite.service.services.ledger.balance(live.accountId);

  test('a test identity and an avatar session cost nothing: the live balance stays, the test one is 0', async () => {
    const before = await liveBalance();
    const made = await sandbox.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) });
    expect(made.status).toBe(200);
    const identity = (await made.json()) as IdentityBody & { test: boolean };
    expect(identity.test).toBe(true);
    const started = await sandbox.call('POST', '/v1/sessions/start', json({ identity_id: identity.identity_id }));
    expect(started.status).toBe(200);
    const { room_name } = (await started.json()) as { room_name: string };
    const session = (await (await sandbox.call('GET', `/v1/sessions/${room_name}`)).json()) as Record<string, unknown>;
    expect(session).toMatchObject({ test: true, avatar_enabled: true, publishable_key_id: null });
    // Its minutes are counted at a price of nothing.
    expect(await suite.service.services.billing.chargeMinute(room_name, 0)).toBe('charged');
    const counted = (await (await sandbox.call('GET', `/v1/sessions/${room_name}`)).json()) as Record<string, unknown>;
    expect(counted).toMatchObject({ billed_minutes: 1, credits_charged: 0 });
    expect(await liveBalance()).toBe(before);
    const credits = (await (await sandbox.call('GET', '/v1/credits')).json()) as { balance: number };
    expect(credits.balance).toBe(0);
    const charges = await suite.service.services.database.db.select().from(creditLedger);
    expect(charges.filter((row) => isTestAccount(row.accountId) && row.amount !== 0)).toEqual([]);
    // Short, and marked for the agent: its video carries "TEST".
    expect((await dispatchedTo(suite.service, room_name)).test).toBe(true);
    expect((await suite.service.services.lifecycle.find(room_name))!.maxDurationSeconds).toBe(TEST_MAX_SECONDS);
    await sandbox.call('POST', `/v1/sessions/${room_name}/end`);
  });

  test('a live session is not marked, and ends at the usual maximum', async () => {
    const identity = (await (
      await live.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) })
    ).json()) as IdentityBody & { test: boolean };
    expect(identity.test).toBe(false);
    const { room_name } = (await (
      await live.call('POST', '/v1/sessions/start', json({ identity_id: identity.identity_id }))
    ).json()) as { room_name: string };
    expect((await dispatchedTo(suite.service, room_name)).test).toBe(false);
    const session = (await (await live.call('GET', `/v1/sessions/${room_name}`)).json()) as Record<string, unknown>;
    expect(session.test).toBe(false);
    await live.call('POST', `/v1/sessions/${room_name}/end`);
  });

  test("neither mode reads or uses the other's resources", async () => {
    const liveIdentity = (await (
      await live.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) })
    ).json()) as IdentityBody;
    const testIdentity = (await (
      await sandbox.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) })
    ).json()) as IdentityBody;
    expect((await sandbox.call('GET', `/v1/identities/${liveIdentity.identity_id}`)).status).toBe(404);
    expect((await live.call('GET', `/v1/identities/${testIdentity.identity_id}`)).status).toBe(404);
    expect(
      (await sandbox.call('POST', '/v1/sessions/start', json({ identity_id: liveIdentity.identity_id }))).status,
    ).toBe(404);
    expect(
      (await live.call('POST', '/v1/sessions/start', json({ identity_id: testIdentity.identity_id }))).status,
    ).toBe(404);
    const testList = (await (await sandbox.call('GET', '/v1/identities')).json()) as {
      identity_id: string;
      test: boolean;
    }[];
    expect(testList.every((i) => i.test)).toBe(true);
    expect(testList.map((i) => i.identity_id)).not.toContain(liveIdentity.identity_id);
    const liveList = (await (await live.call('GET', '/v1/identities')).json()) as {
      identity_id: string;
      test: boolean;
    }[];
    expect(liveList.every((i) => !i.test)).toBe(true);
    // A tool of one mode cannot be attached in the other.
    const tool = (await (
      await sandbox.call('POST', '/v1/tools', json({ name: 'end_call', type: 'end_session' }))
    ).json()) as { tool_id: string; test: boolean };
    expect(tool.test).toBe(true);
    const attach = await live.call('PATCH', `/v1/identities/${liveIdentity.identity_id}`, {
      body: (() => {
        const form = new FormData();
        form.append('tool_ids', JSON.stringify([tool.tool_id]));
        return form;
      })(),
    });
    expect(attach.status).toBe(422);
    // A publishable key made with a test key is a test one, for test identities only.
    const pub = await sandbox.call(
      'POST',
      '/v1/publishable-keys',
      json({ allowed_origins: ['https://shop.example'], identity_ids: [liveIdentity.identity_id] }),
    );
    expect(pub.status).toBe(422);
    const testPub = (await (
      await sandbox.call(
        'POST',
        '/v1/publishable-keys',
        json({ allowed_origins: ['https://shop.example'], identity_ids: [testIdentity.identity_id] }),
      )
    ).json()) as { publishable_key: string; test: boolean };
    expect(testPub.publishable_key).toMatch(/^lk_pub_test_/);
    expect(testPub.test).toBe(true);
    const started = await suite.service.call('POST', '/v1/embed/sessions', {
      body: JSON.stringify({ identity_id: testIdentity.identity_id }),
      headers: {
        authorization: `Bearer ${testPub.publishable_key}`,
        'content-type': 'application/json',
        origin: 'https://shop.example',
      },
    });
    expect(started.status).toBe(200);
    const body = (await started.json()) as { session_id: string; test: boolean; max_duration_seconds: number };
    expect(body).toMatchObject({ test: true, max_duration_seconds: TEST_MAX_SECONDS });
    await sandbox.call('POST', `/v1/sessions/${body.session_id}/end`);
  });

  test('webhooks say which mode an event is from; each mode has its own endpoints', async () => {
    const liveHook = (await (
      await live.call('POST', '/v1/webhooks', json({ url: receiver.url('/live'), events: ['identity.ready'] }))
    ).json()) as { webhook_id: string; secret: string; test: boolean };
    const testHook = (await (
      await sandbox.call('POST', '/v1/webhooks', json({ url: receiver.url('/test'), events: ['identity.ready'] }))
    ).json()) as { webhook_id: string; secret: string; test: boolean };
    expect([liveHook.test, testHook.test]).toEqual([false, true]);
    expect((await live.call('GET', `/v1/webhooks/${testHook.webhook_id}`)).status).toBe(404);
    await sandbox.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) });
    await live.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) });
    const testEvent = await receiver.waitFor('the test event', () => receiver.on('/test')[0]);
    const liveEvent = await receiver.waitFor('the live event', () => receiver.on('/live')[0]);
    expect(JSON.parse(testEvent.body)).toMatchObject({ type: 'identity.ready', test: true });
    expect(JSON.parse(liveEvent.body)).toMatchObject({ type: 'identity.ready', test: false });
    // Each endpoint got its own mode's event only.
    expect(receiver.on('/test')).toHaveLength(1);
    expect(receiver.on('/live')).toHaveLength(1);
  });

  test('the console makes test keys and lists them beside live ones; a test key works on /v1 at once', async () => {
    const browser = new ConsoleClient(suite.service);
    await browser.signUp(uniqueEmail());
    const made = await browser.call('POST', '/console/api/keys', { json: { name: 'staging', test: true } });
    expect(made.status).toBe(201);
    const key = (await made.json()) as { api_key: string; test: boolean; key_id: string };
    const apiKey = String(key.api_key);
    expect(apiKey).toMatch(/^lk_test_[0-9A-Za-z]{43}$/);
    expect(key.test).toBe(true);
    const listed = (await (await browser.call('GET', '/console/api/keys')).json()) as {
      key_id: string;
      test: boolean;
      prefix: string;
    }[];
    expect(listed.find((k) => k.key_id === key.key_id)).toMatchObject({ test: true, prefix: apiKey.slice(0, 12) });
    expect(listed.filter((k) => !k.test)).toHaveLength(1); // the sign-up's own live key
    const v1 = await fetch(`${suite.service.url}/v1/identities`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(v1.status).toBe(200);
    // Revoked through the console like a live key.
    expect((await browser.call('DELETE', `/console/api/keys/${key.key_id}`)).status).toBe(204);
    expect(
      (await fetch(`${suite.service.url}/v1/identities`, { headers: { authorization: `Bearer ${apiKey}` } })).status,
    ).toBe(401);
  });

  test("the operator's CLI makes test keys only for live accounts", async () => {
    const issued = await suite.service.services.operations.createKey({ account_id: live.accountId, test: true });
    const testAccountId = (
      (await suite.service.services.operations.listKeys({ account_id: live.accountId })) as {
        key_id: string;
        test: boolean;
      }[]
    ).find((k) => k.key_id === issued.key_id);
    expect(testAccountId?.test).toBe(true);
    await expect(
      suite.service.services.operations.createKey({ account_id: `acc_test_${live.accountId.slice(4)}`, test: true }),
    ).rejects.toThrow(/test account/);
  });
});

test('test account ids are derived from live ones and never collide with them', async () => {
  const { liveAccountIdOf, testAccountIdOf } = await import('../../src/accounts/test-mode.ts');
  expect(testAccountIdOf('acc_AbC123')).toBe('acc_test_AbC123');
  expect(liveAccountIdOf('acc_test_AbC123')).toBe('acc_AbC123');
  expect(isTestAccount('acc_AbC123')).toBe(false);
  expect(isTestAccount('acc_test_AbC123')).toBe(true);
  // Live ids are base62 after `acc_`: no `_`, so no live id starts with `acc_test_`.
  const { newId } = await import('../../src/db/ids.ts');
  for (let i = 0; i < 200; i++) expect(isTestAccount(newId('acc'))).toBe(false);
});
