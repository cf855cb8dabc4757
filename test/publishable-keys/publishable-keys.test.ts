// Publishable keys (issue 34 point 1; docs/api.md#publishable-keys) on both engines: made, read,
// changed and revoked by a secret key and by the console; every refusal naming the field at
// fault; the key itself reads nothing; a secret key sent from another site's page is refused
// with the reason, the service's own pages (its API reference) are not.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { publishableKeys } from '../../src/publishable-keys/schema.ts';
import { ConsoleClient, uniqueEmail } from '../console/support.ts';
import { type IdentityBody, identityForm } from '../support/forms.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { json } from '../support/webhooks.ts';

interface PublishableKey {
  publishable_key_id: string;
  publishable_key: string;
  name: string | null;
  allowed_origins: string[];
  identity_ids: string[];
  limits: Record<string, number>;
  test: boolean;
  last_used_at: string | null;
  revoked_at: string | null;
}
type Problems = { detail: { loc: (string | number)[]; msg: string; type: string }[] };

describe.each(ENGINES)('publishable keys on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let identity: IdentityBody;

  beforeAll(async () => {
    service = await startTestService(engine, { env: { CREDITS_ONBOARDING: '0' } });
    account = await service.account();
    identity = (await (
      await account.call('POST', '/v1/identities', { body: await identityForm() })
    ).json()) as IdentityBody;
  });
  afterAll(() => service.stop());

  const rowCount = async () => (await service.services.database.db.select().from(publishableKeys)).length;

  test('made with the origins as browsers send them and default limits; read, listed, changed, revoked', async () => {
    const created = await account.call(
      'POST',
      '/v1/publishable-keys',
      json({
        name: 'Shop',
        allowed_origins: ['https://shop.example', 'HTTPS://WWW.Shop.Example:443/', 'http://127.0.0.1:5173'],
        identity_ids: [identity.identity_id],
      }),
    );
    expect(created.status).toBe(201);
    const key = (await created.json()) as PublishableKey;
    expect(key.publishable_key).toMatch(/^lk_pub_[0-9A-Za-z]{43}$/);
    expect(key.allowed_origins).toEqual(['https://shop.example', 'https://www.shop.example', 'http://127.0.0.1:5173']);
    expect(key.limits).toEqual({
      sessions_per_minute: 10,
      concurrent_sessions: 5,
      visitor_sessions_per_minute: 3,
      visitor_concurrent_sessions: 1,
    });
    expect(key.test).toBe(false);
    expect(key.revoked_at).toBeNull();

    const read = (await (
      await account.call('GET', `/v1/publishable-keys/${key.publishable_key_id}`)
    ).json()) as PublishableKey;
    expect(read).toEqual(key);
    const list = (await (await account.call('GET', '/v1/publishable-keys')).json()) as PublishableKey[];
    expect(list.map((k) => k.publishable_key_id)).toContain(key.publishable_key_id);

    const changed = await account.call(
      'PATCH',
      `/v1/publishable-keys/${key.publishable_key_id}`,
      json({ limits: { concurrent_sessions: 20 }, allowed_origins: ['https://shop.example'] }),
    );
    expect(changed.status).toBe(200);
    const after = (await changed.json()) as PublishableKey;
    expect(after.limits).toEqual({ ...key.limits, concurrent_sessions: 20 });
    expect(after.allowed_origins).toEqual(['https://shop.example']);

    expect((await account.call('DELETE', `/v1/publishable-keys/${key.publishable_key_id}`)).status).toBe(204);
    expect((await account.call('DELETE', `/v1/publishable-keys/${key.publishable_key_id}`)).status).toBe(404);
    const revoked = (await (
      await account.call('GET', `/v1/publishable-keys/${key.publishable_key_id}`)
    ).json()) as PublishableKey;
    expect(revoked.revoked_at).not.toBeNull();

    // Another account does not see it.
    const other = await service.account();
    expect((await other.call('GET', `/v1/publishable-keys/${key.publishable_key_id}`)).status).toBe(404);
    expect(await (await other.call('GET', '/v1/publishable-keys')).json()).toEqual([]);
  });

  test.each([
    [
      'an origin with a path',
      { allowed_origins: ['https://shop.example/contact'] },
      ['body', 'allowed_origins', 0],
      'origin_invalid',
    ],
    [
      'an origin with a query',
      { allowed_origins: ['https://shop.example?x=1'] },
      ['body', 'allowed_origins', 0],
      'origin_invalid',
    ],
    [
      'an origin of another scheme',
      { allowed_origins: ['ftp://shop.example'] },
      ['body', 'allowed_origins', 0],
      'origin_invalid',
    ],
    ['a bare host', { allowed_origins: ['shop.example'] }, ['body', 'allowed_origins', 0], 'origin_invalid'],
    ['a wildcard', { allowed_origins: ['https://*.shop.example'] }, ['body', 'allowed_origins', 0], 'origin_invalid'],
    ['no origins', { allowed_origins: [] }, ['body', 'allowed_origins'], undefined],
    ['an unknown identity', { identity_ids: ['idn_nope'] }, ['body', 'identity_ids', 0], 'unknown_identity'],
    ['a limit of 0', { limits: { concurrent_sessions: 0 } }, ['body', 'limits', 'concurrent_sessions'], undefined],
    [
      'a limit as text',
      { limits: { sessions_per_minute: 'five' } },
      ['body', 'limits', 'sessions_per_minute'],
      undefined,
    ],
  ])('%s is 422 naming the field, and nothing is kept', async (_, change, loc, type) => {
    const before = await rowCount();
    const answer = await account.call(
      'POST',
      '/v1/publishable-keys',
      json({ allowed_origins: ['https://shop.example'], identity_ids: [identity.identity_id], ...change }),
    );
    expect(answer.status).toBe(422);
    const problems = ((await answer.json()) as Problems).detail;
    expect(problems.map((p) => p.loc)).toContainEqual(loc);
    if (type) expect(problems.map((p) => p.type)).toContain(type);
    expect(await rowCount()).toBe(before);
  });

  test("another account's identity is refused as unknown", async () => {
    const other = await service.account();
    const theirs = (await (
      await other.call('POST', '/v1/identities', { body: await identityForm() })
    ).json()) as IdentityBody;
    const answer = await account.call(
      'POST',
      '/v1/publishable-keys',
      json({ allowed_origins: ['https://shop.example'], identity_ids: [theirs.identity_id] }),
    );
    expect(answer.status).toBe(422);
    expect(((await answer.json()) as Problems).detail[0]!.type).toBe('unknown_identity');
  });

  test('the publishable key reads nothing and starts nothing through the secret routes', async () => {
    const key = (await (
      await account.call(
        'POST',
        '/v1/publishable-keys',
        json({ allowed_origins: ['https://shop.example'], identity_ids: [identity.identity_id] }),
      )
    ).json()) as PublishableKey;
    const asWebsite = { authorization: `Bearer ${key.publishable_key}` };
    for (const [method, path, body] of [
      ['GET', '/v1/identities', undefined],
      ['GET', `/v1/identities/${identity.identity_id}`, undefined],
      ['GET', '/v1/sessions', undefined],
      ['GET', '/v1/credits', undefined],
      ['GET', '/v1/publishable-keys', undefined],
      ['POST', '/v1/sessions/start', JSON.stringify({ identity_id: identity.identity_id })],
    ] as const) {
      const answer = await service.call(method, path, {
        body,
        headers: { ...asWebsite, ...(body ? { 'content-type': 'application/json' } : {}) },
      });
      expect(answer.status).toBe(403);
      expect(((await answer.json()) as { detail: string }).detail).toContain('POST /v1/embed/sessions');
    }
    // Nor through X-API-Key.
    const viaHeader = await service.call('GET', '/v1/identities', { headers: { 'x-api-key': key.publishable_key } });
    expect(viaHeader.status).toBe(403);
  });

  test("a secret key from another site's page is refused with the reason; from the service's own page it is not", async () => {
    const fromPage = await account.call('GET', '/v1/identities', { headers: { origin: 'https://shop.example' } });
    expect(fromPage.status).toBe(403);
    const { detail } = (await fromPage.json()) as { detail: string };
    expect(detail).toContain('https://shop.example');
    expect(detail).toContain('Keep secret keys on your server');
    expect(detail).toContain('publishable key');
    // A POST with a body too, refused before its body is read.
    const start = await account.call('POST', '/v1/sessions/start', {
      body: JSON.stringify({}),
      headers: { origin: 'null', 'content-type': 'application/json' },
    });
    expect(start.status).toBe(403);
    // The service's own origin (its /docs "try it out") and a server (no Origin) are fine.
    const own = await account.call('GET', '/v1/identities', { headers: { origin: new URL(service.url).origin } });
    expect(own.status).toBe(200);
    expect((await account.call('GET', '/v1/identities')).status).toBe(200);
  });

  test("the console's twin makes and lists the account's keys", async () => {
    const console = new ConsoleClient(service);
    await console.signUp(uniqueEmail());
    const mine = (await (await console.call('POST', '/v1/identities', {})).status) as number;
    expect(mine).toBe(401); // the console has no API key; its identities come through its own door
    const made = await console.call('POST', '/console/api/identities', { body: await identityForm() });
    const ownIdentity = (await made.json()) as IdentityBody;
    const created = await console.call('POST', '/console/api/publishable-keys', {
      json: { name: 'Blog', allowed_origins: ['https://blog.example'], identity_ids: [ownIdentity.identity_id] },
    });
    expect(created.status).toBe(201);
    const listed = (await (await console.call('GET', '/console/api/publishable-keys')).json()) as PublishableKey[];
    expect(listed.map((k) => k.name)).toEqual(['Blog']);
    // Without the CSRF header a change is refused.
    const forged = await console.call('POST', '/console/api/publishable-keys', {
      json: { allowed_origins: ['https://evil.example'], identity_ids: [ownIdentity.identity_id] },
      csrf: null,
    });
    expect(forged.status).toBe(403);
  });
});
