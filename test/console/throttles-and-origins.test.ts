// The console's throttles under parallel requests and behind a proxy, and sign-in/sign-up
// only from the console's own pages (issue 16): attempts are taken before the work they limit,
// atomically, so 50 parallel sign-ups from one address make exactly the hourly limit of
// accounts; X-Forwarded-For counts only from TRUSTED_PROXIES; a cross-site page cannot sign a
// browser in (login CSRF through a text/plain form) or sign up for it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { CallerAddress } from '../../src/http/caller-address.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { ConsoleClient, uniqueEmail } from './support.ts';

const SIGNUPS = 5;
const FAILURES = 3;
const PASSWORD = 'correct horse battery';

const signUp = (service: TestService, email = uniqueEmail(), headers: Record<string, string> = {}) =>
  new ConsoleClient(service).call('POST', '/console/api/sign-up', { json: { email, password: PASSWORD }, headers });
const signIn = (service: TestService, email: string, password: string, headers: Record<string, string> = {}) =>
  new ConsoleClient(service).call('POST', '/console/api/sign-in', { json: { email, password }, headers });

describe('throttles under parallel requests', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('pglite', {
      env: { CONSOLE_SIGNUPS_PER_HOUR: String(SIGNUPS), CONSOLE_SIGNIN_FAILURES: String(FAILURES) },
    });
  });
  afterAll(() => service.stop());

  test(`50 parallel sign-ups from one address create exactly ${SIGNUPS} accounts`, async () => {
    const before = await service.count('accounts');
    const statuses = (await Promise.all(Array.from({ length: 50 }, () => signUp(service)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(SIGNUPS);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50 - SIGNUPS);
    expect(await service.count('accounts')).toBe(before + SIGNUPS);
  }, 60_000);

  test(`20 parallel wrong passwords for one email get exactly ${FAILURES} checks; the rest 429, and so does the right one then`, async () => {
    const email = uniqueEmail();
    const other = await startTestService('pglite', { env: { CONSOLE_SIGNIN_FAILURES: String(FAILURES) } });
    try {
      expect((await signUp(other, email)).status).toBe(201);
      const statuses = (
        await Promise.all(Array.from({ length: 20 }, () => signIn(other, email, 'wrong password!!')))
      ).map((r) => r.status);
      expect(statuses.filter((s) => s === 401)).toHaveLength(FAILURES);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20 - FAILURES);
      expect((await signIn(other, email, PASSWORD)).status).toBe(429);
    } finally {
      await other.stop();
    }
  }, 60_000);

  test('right passwords do not use up the limit', async () => {
    const other = await startTestService('pglite', { env: { CONSOLE_SIGNIN_FAILURES: String(FAILURES) } });
    try {
      const email = uniqueEmail();
      expect((await signUp(other, email)).status).toBe(201);
      for (let i = 0; i < FAILURES + 2; i++) expect((await signIn(other, email, PASSWORD)).status).toBe(200);
    } finally {
      await other.stop();
    }
  }, 60_000);
});

describe('behind a proxy', () => {
  test('X-Forwarded-For names the client only when the proxy is trusted', () => {
    const request = (forwarded: string) =>
      new Request('http://likeness.test/', { headers: { 'x-forwarded-for': forwarded } });
    const none = new CallerAddress([], 64);
    expect(none.of(request('203.0.113.9'), '10.0.0.2')).toBe('10.0.0.2');
    const proxies = new CallerAddress(['10.0.0.0/8', '::1'], 64);
    // The proxy's own address is replaced by the one it forwarded; spoofed entries further
    // left (the client's own header) are not believed.
    expect(proxies.of(request('198.51.100.7, 203.0.113.9'), '10.0.0.2')).toBe('203.0.113.9');
    expect(proxies.of(request('203.0.113.9, 10.1.1.1'), '::ffff:10.0.0.2')).toBe('203.0.113.9');
    expect(proxies.of(request('203.0.113.9'), '::1')).toBe('203.0.113.9');
    expect(proxies.of(request('203.0.113.9'), '192.0.2.50')).toBe('192.0.2.50');
    expect(proxies.of(request('not-an-address'), '10.0.0.2')).toBe('10.0.0.2');
    expect(() => new CallerAddress(['10.0.0.0/x'], 64)).toThrow('TRUSTED_PROXIES');
  });

  test('behind a trusted proxy each client address has its own sign-up limit; without it one limit for everyone behind it', async () => {
    const trusting = await startTestService('pglite', {
      env: { CONSOLE_SIGNUPS_PER_HOUR: '2', TRUSTED_PROXIES: '127.0.0.1,::1' },
    });
    const plain = await startTestService('pglite', { env: { CONSOLE_SIGNUPS_PER_HOUR: '2' } });
    try {
      for (const client of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
        for (let i = 0; i < 2; i++)
          expect((await signUp(trusting, undefined, { 'x-forwarded-for': client })).status).toBe(201);
        expect((await signUp(trusting, undefined, { 'x-forwarded-for': client })).status).toBe(429);
      }
      const statuses = [];
      for (const client of ['203.0.113.1', '203.0.113.2', '203.0.113.3'])
        statuses.push((await signUp(plain, undefined, { 'x-forwarded-for': client })).status);
      expect(statuses).toEqual([201, 201, 429]);
    } finally {
      await trusting.stop();
      await plain.stop();
    }
  }, 60_000);
});

describe('sign-in and sign-up from the console’s own pages only', () => {
  let service: TestService;
  let email: string;
  beforeAll(async () => {
    service = await startTestService('pglite', { env: { CONSOLE_SIGNUPS_PER_HOUR: '100' } });
    email = uniqueEmail();
    expect((await signUp(service, email)).status).toBe(201);
  });
  afterAll(() => service.stop());

  test('a text/plain body (what a cross-site form can send) is refused, even with the right password', async () => {
    const response = await fetch(`${service.url}/console/api/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(response.status).toBe(415);
    expect(response.headers.get('set-cookie')).toBeNull();
  });

  test('another site’s Origin or Sec-Fetch-Site is refused; the console’s own, and none at all (scripts), are not', async () => {
    const foreign: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of foreign) {
      const refused = await signIn(service, email, PASSWORD, headers);
      expect(refused.status).toBe(403);
      expect(refused.headers.get('set-cookie')).toBeNull();
      expect((await signUp(service, undefined, headers)).status).toBe(403);
    }
    expect(
      (
        await signIn(service, email, PASSWORD, {
          origin: service.config.console.origin,
          'sec-fetch-site': 'same-origin',
        })
      ).status,
    ).toBe(200);
    expect((await signIn(service, email, PASSWORD, { origin: new URL(service.url).origin })).status).toBe(200);
    expect((await signIn(service, email, PASSWORD)).status).toBe(200);
  });
});
