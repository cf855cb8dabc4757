// Edges an attacker tries (issue 16): percent-encoded traversal out of /assets, a wrong admin
// token, and the console's Content-Security-Policy.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startTestService, type TestService } from '../support/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService('pglite');
});
afterAll(() => service.stop());

test('percent-encoded traversal out of /assets answers 404, never a file outside the store, even with a valid signature', async () => {
  const links = service.services.assetLinks;
  for (const [path, decoded] of [
    ['%2e%2e/%2e%2e/etc/passwd', '../../etc/passwd'],
    ['..%2f..%2fetc%2fpasswd', '../../etc/passwd'],
    ['%2e%2e%2fpglite%2fPG_VERSION', '../pglite/PG_VERSION'],
    ['identities/%2e%2e/%2e%2e/admin-token', 'identities/../../admin-token'],
    ['..%5c..%5cetc%5cpasswd', '..\\..\\etc\\passwd'],
  ] as const) {
    // Signed for the key as the server decodes it, and as sent: neither opens a file outside.
    for (const signedFor of [decoded, path]) {
      const query = new URL(links.url(signedFor)).search;
      const response = await fetch(`${service.config.assetsUrl}/${path}${query}`);
      expect([path, response.status]).toEqual([path, 404]);
      expect(await response.text()).not.toContain('root:');
    }
  }
});

test('a wrong or missing admin token answers 401 on every admin route, and changes nothing', async () => {
  const before = await service.count('accounts');
  for (const authorization of [undefined, 'Bearer wrong-token', 'Basic YWRtaW46YWRtaW4=', 'Bearer ']) {
    const response = await fetch(`${service.url}/internal/admin/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify({ email: `intruder-${crypto.randomUUID()}@example.com`, credits: 1_000_000 }),
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { detail: string }).detail).toBe('Invalid admin token');
  }
  expect(
    (
      await fetch(`${service.url}/internal/admin/limits?account_id=acc_x`, {
        headers: { authorization: 'Bearer nope' },
      })
    ).status,
  ).toBe(401);
  expect(await service.count('accounts')).toBe(before);
});

test('the console is served with a Content-Security-Policy that allows its own scripts only', async () => {
  const response = await fetch(`${service.url}/console`);
  expect(response.status).toBe(200);
  const policy = response.headers.get('content-security-policy') ?? '';
  expect(policy).toContain("default-src 'self'");
  expect(policy).toMatch(/script-src 'self'(;|$| )/);
  expect(policy).toContain("frame-ancestors 'none'");
});
