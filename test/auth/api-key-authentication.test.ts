// docs/api.md#authentication: API keys, both headers, 401 for missing, malformed, unknown or revoked keys.
import { describe, expect, test } from 'bun:test';
import { hashApiKey } from '../../src/auth/api-keys.ts';
import { ENGINES } from '../support/service.ts';
import { suiteServiceWithAccount } from '../support/suite-service.ts';

describe.each(ENGINES)('authentication on %s', (engine) => {
  const suite = suiteServiceWithAccount(engine);

  const expect401 = async (response: Response) => {
    expect(response.status).toBe(401);
    const body = (await response.json()) as { detail: unknown };
    expect(typeof body.detail).toBe('string');
  };

  test('a key is lk_ followed by at least 32 random bytes in base62', () => {
    expect(suite.account.apiKey).toMatch(/^lk_[0-9A-Za-z]{43}$/);
  });

  test('only a hash of the key is stored', async () => {
    const rows = (await suite.service.services.database.db.query.apiKeys.findMany()) as { keyHash: string }[];
    const hashes = rows.map((r) => r.keyHash);
    expect(hashes).toContain(hashApiKey(suite.account.apiKey));
    expect(JSON.stringify(rows)).not.toContain(suite.account.apiKey);
  });

  test('Authorization: Bearer <key> is accepted', async () => {
    const response = await suite.service.call('GET', '/v1/identities', {
      headers: { authorization: `Bearer ${suite.account.apiKey}` },
    });
    expect(response.status).toBe(200);
  });

  test('X-API-Key: <key> is accepted', async () => {
    const response = await suite.service.call('GET', '/v1/identities', {
      headers: { 'x-api-key': suite.account.apiKey },
    });
    expect(response.status).toBe(200);
  });

  test('a missing key answers 401', async () => {
    await expect401(await suite.service.call('GET', '/v1/identities'));
    await expect401(await suite.service.call('POST', '/v1/identities', { body: new FormData() }));
    await expect401(await suite.service.call('GET', '/v1/identities/idn_x/status'));
  });

  test('a malformed key answers 401', async () => {
    const malformed: Record<string, string>[] = [
      { authorization: 'Bearer' },
      { authorization: 'Bearer not-a-key' },
      { authorization: `Basic ${btoa(`user:${suite.account.apiKey}`)}` },
      { authorization: `Bearer ${suite.account.apiKey.slice(3)}` },
      { 'x-api-key': '' },
      { 'x-api-key': `${suite.account.apiKey}x` },
    ];
    for (const headers of malformed) {
      await expect401(await suite.service.call('GET', '/v1/identities', { headers }));
    }
  });

  test("a key's last use is recorded (to the minute) and listed without the key", async () => {
    const ops = suite.service.services.operations;
    const fresh = await ops.createKey({ account_id: suite.account.accountId, name: 'usage' });
    const before = (await ops.listKeys({ account_id: suite.account.accountId })) as {
      key_id: string;
      last_used_at: string | null;
    }[];
    expect(before.find((k) => k.key_id === fresh.key_id)?.last_used_at).toBeNull();
    await suite.service.call('GET', '/v1/identities', { headers: { 'x-api-key': fresh.api_key } });
    const after = (await ops.listKeys({ account_id: suite.account.accountId })) as {
      key_id: string;
      last_used_at: string | null;
    }[];
    expect(Date.now() - Date.parse(after.find((k) => k.key_id === fresh.key_id)!.last_used_at!)).toBeLessThan(60_000);
    expect(JSON.stringify(after)).not.toContain(fresh.api_key);
  });

  test('an unknown key answers 401', async () => {
    const unknown = `lk_${'A'.repeat(43)}`;
    await expect401(
      await suite.service.call('GET', '/v1/identities', { headers: { authorization: `Bearer ${unknown}` } }),
    );
  });

  test("a revoked key answers 401 while the account's other keys still work", async () => {
    const ops = suite.service.services.operations;
    const spare = await ops.createKey({ account_id: suite.account.accountId, name: 'spare' });
    const headers = { 'x-api-key': spare.api_key };
    expect((await suite.service.call('GET', '/v1/identities', { headers })).status).toBe(200);
    await ops.revokeKey({ account_id: suite.account.accountId, key_id: spare.key_id });
    await expect401(await suite.service.call('GET', '/v1/identities', { headers }));
    expect((await suite.account.call('GET', '/v1/identities')).status).toBe(200);
  });
});
