// Per-address limits count an IPv6 client by its /64 (LIMIT_IPV6_PREFIX), issue 41 point 5:
// one customer line is given a whole /64, so counting single addresses let it sign up, guess
// passwords and start embed sessions without end. Through the real routes on both engines, the
// client named by X-Forwarded-For from a trusted proxy (127.0.0.1), as behind the operator's.
import { describe, expect, test } from 'bun:test';
import { limitKeyOf } from '../../src/http/caller-address.ts';
import { type IdentityBody, identityForm } from '../support/forms.ts';
import { ENGINES, type TestService } from '../support/service.ts';
import { suiteService } from '../support/suite-service.ts';
import { json } from '../support/webhooks.ts';

const SHOP = 'https://shop.example';
const PASSWORD = 'correct horse battery';
/** Many addresses of one /64, as its holder would rotate through them. */
const ONE_NETWORK = [
  '2001:db8:aa:1::1',
  '2001:db8:aa:1::2',
  '2001:db8:aa:1:ffff:ffff:ffff:fffe',
  '2001:db8:aa:1:1:2:3:4',
];

const consoleCall = (service: TestService, path: string, from: string, body: unknown) =>
  service.call('POST', `/console/api/${path}`, {
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
  });
const signUp = (service: TestService, from: string) =>
  consoleCall(service, 'sign-up', from, { email: `v6-${crypto.randomUUID()}@example.com`, password: PASSWORD });

test('the key: IPv4 as it is, IPv4-mapped IPv6 as its IPv4, IPv6 as its network of the prefix', () => {
  expect(limitKeyOf('203.0.113.9', 64)).toBe('203.0.113.9');
  expect(limitKeyOf('::ffff:203.0.113.9', 64)).toBe('203.0.113.9');
  expect(limitKeyOf('::ffff:cb00:7109', 64)).toBe('203.0.113.9');
  for (const address of ONE_NETWORK) expect(limitKeyOf(address, 64)).toBe('2001:db8:aa:1::/64');
  expect(limitKeyOf('2001:db8:aa:2::1', 64)).toBe('2001:db8:aa:2::/64');
  expect(limitKeyOf('2001:db8:aa:2::1', 48)).toBe('2001:db8:aa::/48');
  expect(limitKeyOf('2001:DB8:AA:1::1', 128)).toBe('2001:db8:aa:1::1/128');
});

describe.each(ENGINES)('per-address limits on %s', (engine) => {
  describe('console', () => {
    const suite = suiteService(engine, {
      env: { CONSOLE_SIGNUPS_PER_HOUR: '2', CONSOLE_SIGNIN_FAILURES: '1', TRUSTED_PROXIES: '127.0.0.1,::1' },
    });

    test('sign-ups from many addresses of one /64 share its limit; another /64 has its own', async () => {
      const statuses = [];
      for (const from of ONE_NETWORK) statuses.push((await signUp(suite.service, from)).status);
      expect(statuses).toEqual([201, 201, 429, 429]);
      expect((await signUp(suite.service, '2001:db8:aa:2::1')).status).toBe(201);
    }, 60_000);

    test('an IPv4 client is one address, written plain or IPv4-mapped', async () => {
      const statuses = [];
      for (const from of ['198.51.100.20', '::ffff:198.51.100.20', '::ffff:c633:6414'])
        statuses.push((await signUp(suite.service, from)).status);
      expect(statuses).toEqual([201, 201, 429]);
      expect((await signUp(suite.service, '198.51.100.21')).status).toBe(201);
    }, 60_000);

    test('failed sign-ins per address (4 × CONSOLE_SIGNIN_FAILURES) count the /64 too', async () => {
      const statuses = [];
      for (let i = 0; i < 6; i++) {
        const from = `2001:db8:bb:1::${i + 1}`;
        const body = { email: `nobody-${crypto.randomUUID()}@example.com`, password: 'wrong password!!' };
        statuses.push((await consoleCall(suite.service, 'sign-in', from, body)).status);
      }
      expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
      const elsewhere = { email: `nobody-${crypto.randomUUID()}@example.com`, password: 'wrong password!!' };
      expect((await consoleCall(suite.service, 'sign-in', '2001:db8:bb:2::1', elsewhere)).status).toBe(401);
    }, 60_000);
  });

  describe("the embed's per-visitor limits", () => {
    const suite = suiteService(engine, {
      livekit: 'local',
      env: { CREDITS_ONBOARDING: '0', TRUSTED_PROXIES: '127.0.0.1' },
    });

    test('starts from many addresses of one /64 are one visitor; another /64 is another', async () => {
      const account = await suite.service.account({ credits: 10_000 });
      const identity = (await (
        await account.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) })
      ).json()) as IdentityBody;
      const created = await account.call(
        'POST',
        '/v1/publishable-keys',
        json({
          allowed_origins: [SHOP],
          identity_ids: [identity.identity_id],
          limits: { visitor_concurrent_sessions: 1, visitor_sessions_per_minute: 100, concurrent_sessions: 10 },
        }),
      );
      expect(created.status).toBe(201);
      const { publishable_key } = (await created.json()) as { publishable_key: string };
      const start = (from: string) =>
        suite.service.call('POST', '/v1/embed/sessions', {
          body: JSON.stringify({ identity_id: identity.identity_id }),
          headers: {
            authorization: `Bearer ${publishable_key}`,
            'content-type': 'application/json',
            origin: SHOP,
            'x-forwarded-for': from,
          },
        });
      const answers = [];
      for (const from of ONE_NETWORK) answers.push(await start(from));
      expect(answers.map((a) => a.status)).toEqual([200, 429, 429, 429]);
      expect(((await answers[1]!.json()) as { detail: string }).detail).toContain('open with this site already');
      const other = await start('2001:db8:aa:2::1');
      expect(other.status).toBe(200);
      for (const answer of [answers[0]!, other]) {
        const { session_id } = (await answer.json()) as { session_id: string };
        await account.call('POST', `/v1/sessions/${session_id}/end`);
      }
    }, 120_000);
  });
});
