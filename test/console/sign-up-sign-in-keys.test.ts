// The console's server side: sign-up and sign-in with a password, the cookie and CSRF locks,
// the sign-in throttle, keys and credits, and the public API's routes behind the cookie.
// biome-ignore-all lint/style/noExcessiveLinesPerFile: one service on each engine shared by the console's account flows, each step building on the last
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { consoleSessions } from '../../src/auth/schema.ts';
import { consoleLogins } from '../../src/console/schema.ts';
import { AttemptLimiter } from '../../src/limits/index.ts';
import { limitAttempts } from '../../src/limits/schema.ts';
import { identityForm } from '../support/forms.ts';
import { freshDatabase } from '../support/postgres.ts';
import { ENGINES, startTestService, type TestService } from '../support/service.ts';
import { suiteService } from '../support/suite-service.ts';
import { ConsoleClient, uniqueEmail } from './support.ts';

const STARTER_CREDITS = 321;
const FAILURES_ALLOWED = 3;

describe.each(ENGINES)('console API on %s', (engine) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(engine, {
      env: {
        CONSOLE_STARTER_CREDITS: String(STARTER_CREDITS),
        CONSOLE_SIGNIN_FAILURES: String(FAILURES_ALLOWED),
        CONSOLE_SIGNUPS_PER_HOUR: '1000',
        CREDITS_ONBOARDING: '50',
      },
    });
  });
  afterAll(() => service.stop());

  describe('sign-up', () => {
    test('creates the account with the starter grant and a key shown once, and signs the browser in', async () => {
      const browser = new ConsoleClient(service);
      const email = uniqueEmail();
      const body = await browser.signUp(email.toUpperCase());
      expect(body.account).toEqual({ account_id: expect.stringMatching(/^acc_/), email, balance: STARTER_CREDITS });
      expect(body.api_key!.api_key).toMatch(/^lk_[0-9A-Za-z]{43}$/);
      expect(body.csrf_token).toMatch(/^[0-9A-Za-z]{32}$/);
      // The cookie: httpOnly, SameSite=Strict, Secure on 127.0.0.1 (browsers keep it there).
      expect(browser.lastSetCookie).toMatch(/^likeness_console=[0-9A-Za-z]{43}; /);
      for (const attribute of ['HttpOnly', 'SameSite=Strict', 'Secure', 'Path=/'])
        expect(browser.lastSetCookie).toContain(attribute);
      // The key works on the public API…
      const identities = await fetch(`${service.url}/v1/identities`, {
        headers: { authorization: `Bearer ${body.api_key!.api_key}` },
      });
      expect(identities.status).toBe(200);
      // …and is never shown again: the key list has only its prefix.
      const keys = (await (await browser.call('GET', '/console/api/keys')).json()) as {
        key_id: string;
        prefix: string;
      }[];
      expect(keys).toHaveLength(1);
      expect(keys[0]!.prefix).toBe(body.api_key!.api_key.slice(0, 7));
      expect(JSON.stringify(keys)).not.toContain(body.api_key!.api_key);
      // The grant is in the ledger; only a hash of the password is stored.
      const credits = (await (await browser.call('GET', '/console/api/credits')).json()) as {
        balance: number;
        entries: { kind: string; amount: number }[];
        has_more: boolean;
        low_balance_threshold: number;
      };
      expect(credits).toEqual({
        balance: STARTER_CREDITS,
        entries: [expect.objectContaining({ kind: 'grant', amount: STARTER_CREDITS })],
        has_more: false,
        low_balance_threshold: 100,
      });
      const [login] = await service.services.database.db
        .select()
        .from(consoleLogins)
        .where(eq(consoleLogins.accountId, body.account.account_id));
      expect(login!.passwordHash).toStartWith('$argon2id$');
      expect(login!.passwordHash).not.toContain('correct horse');
    });

    test('an email that has an account answers 409 and adds nothing', async () => {
      const email = uniqueEmail();
      await new ConsoleClient(service).signUp(email);
      const before = {
        accounts: await service.count('accounts'),
        keys: await service.count('api_keys'),
        ledger: await service.count('credit_ledger'),
      };
      const again = await new ConsoleClient(service).call('POST', '/console/api/sign-up', {
        json: { email, password: 'another password' },
      });
      expect(again.status).toBe(409);
      expect(await again.json()).toEqual({ detail: expect.stringContaining('already exists') });
      expect({
        accounts: await service.count('accounts'),
        keys: await service.count('api_keys'),
        ledger: await service.count('credit_ledger'),
      }).toEqual(before);
    });

    test.each([
      [{ email: 'not-an-email', password: 'long enough password' }, 'email'],
      [{ email: 'a@example.com', password: 'short' }, 'password'],
      [{ password: 'long enough password' }, 'email'],
      [{ email: 'a@example.com' }, 'password'],
    ])('bad input %j answers 422 on %s, in the spec shape, and creates nothing', async (json, field) => {
      const accounts = await service.count('accounts');
      const response = await new ConsoleClient(service).call('POST', '/console/api/sign-up', { json });
      expect(response.status).toBe(422);
      const body = (await response.json()) as { detail: { loc: string[]; msg: string; type: string }[] };
      expect(body.detail).toContainEqual({ loc: ['body', field], msg: expect.any(String), type: expect.any(String) });
      expect(await service.count('accounts')).toBe(accounts);
    });
  });

  describe('sign-in', () => {
    test('the right password signs in; a wrong one or an unknown email answers 401 alike', async () => {
      const email = uniqueEmail();
      const first = new ConsoleClient(service);
      const { account } = await first.signUp(email, 'the right password');
      const browser = new ConsoleClient(service);
      const wrong = await browser.signIn(email, 'the wrong password');
      expect(wrong.status).toBe(401);
      expect(browser.cookie).toBeUndefined();
      const unknown = await browser.signIn(uniqueEmail(), 'the right password');
      expect(unknown.status).toBe(401);
      expect(await unknown.json()).toEqual(await wrong.json());
      const right = await browser.signIn(` ${email.toUpperCase()} `, 'the right password');
      expect(right.status).toBe(200);
      const me = await browser.call('GET', '/console/api/me');
      expect(await me.json()).toEqual({
        account: { account_id: account.account_id, email, balance: STARTER_CREDITS },
        csrf_token: browser.csrf,
      });
      // Each sign-in is its own session: the first browser stays signed in.
      expect((await first.call('GET', '/console/api/me')).status).toBe(200);
    });

    test(`after ${FAILURES_ALLOWED} failures the email is throttled: 429 with Retry-After, even for the right password`, async () => {
      const email = uniqueEmail();
      await new ConsoleClient(service).signUp(email, 'the right password');
      const browser = new ConsoleClient(service);
      for (let i = 0; i < FAILURES_ALLOWED; i++) expect((await browser.signIn(email, `guess ${i}`)).status).toBe(401);
      const throttled = await browser.signIn(email, 'the right password');
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await throttled.json()).toEqual({ detail: expect.stringContaining('Too many failed sign-ins') });
      expect(browser.cookie).toBeUndefined();
      // Another email is not locked by this one's failures (the address limit is higher).
      const other = uniqueEmail();
      await new ConsoleClient(service).signUp(other, 'other password!');
      expect((await new ConsoleClient(service).signIn(other, 'other password!')).status).toBe(200);
    });

    test('changing the password needs the current one; it signs out every other browser and keeps this one', async () => {
      const email = uniqueEmail();
      const browser = new ConsoleClient(service);
      await browser.signUp(email, 'the first password');
      const elsewhere = new ConsoleClient(service);
      expect((await elsewhere.signIn(email, 'the first password')).status).toBe(200);
      const change = (json: unknown) => browser.call('POST', '/console/api/password', { json });

      const wrong = await change({ current_password: 'not the password', new_password: 'the second password' });
      expect(wrong.status).toBe(422);
      expect(await wrong.json()).toEqual({
        detail: [{ loc: ['body', 'current_password'], msg: 'The current password is wrong', type: 'wrong_password' }],
      });
      const short = await change({ current_password: 'the first password', new_password: 'short' });
      expect(short.status).toBe(422);
      expect(((await short.json()) as { detail: { loc: string[] }[] }).detail[0]!.loc).toEqual([
        'body',
        'new_password',
      ]);
      // Without the CSRF header nothing changes.
      expect(
        (
          await browser.call('POST', '/console/api/password', {
            json: { current_password: 'the first password', new_password: 'the second password' },
            csrf: null,
          })
        ).status,
      ).toBe(403);
      expect((await elsewhere.call('GET', '/console/api/me')).status).toBe(200);

      const oldCookie = browser.cookie;
      const changed = await change({ current_password: 'the first password', new_password: 'the second password' });
      expect(changed.status).toBe(200);
      const body = (await changed.json()) as { account: { email: string }; csrf_token: string };
      expect(body.account.email).toBe(email);
      expect(browser.cookie).not.toBe(oldCookie);
      browser.csrf = body.csrf_token;
      // This browser goes on with its new session; the other one and the old cookie are out.
      expect((await browser.call('GET', '/console/api/me')).status).toBe(200);
      expect((await elsewhere.call('GET', '/console/api/me')).status).toBe(401);
      expect((await fetch(`${service.url}/console/api/me`, { headers: { cookie: oldCookie! } })).status).toBe(401);
      expect((await new ConsoleClient(service).signIn(email, 'the first password')).status).toBe(401);
      expect((await new ConsoleClient(service).signIn(email, 'the second password')).status).toBe(200);
    });

    test('sign-out ends the session: the old cookie no longer works and the cookie is cleared', async () => {
      const browser = new ConsoleClient(service);
      await browser.signUp(uniqueEmail());
      const cookie = browser.cookie!;
      const out = await browser.call('POST', '/console/api/sign-out');
      expect(out.status).toBe(204);
      expect(browser.lastSetCookie).toContain('Max-Age=0');
      const replay = await fetch(`${service.url}/console/api/me`, { headers: { cookie } });
      expect(replay.status).toBe(401);
      expect(await replay.json()).toEqual({ detail: 'Not signed in to the console' });
    });

    test('GET /signed-in answers 200 either way: signed_in false without a live cookie, else the account and the CSRF token', async () => {
      const browser = new ConsoleClient(service);
      const state = () => browser.call('GET', '/console/api/signed-in');
      const before = await state();
      expect(before.status).toBe(200);
      expect(before.headers.get('cache-control')).toBe('no-store');
      expect(await before.json()).toEqual({ signed_in: false, sign_up: true });
      const email = uniqueEmail();
      const { account } = await browser.signUp(email);
      expect(await (await state()).json()).toEqual({
        signed_in: true,
        sign_up: true,
        account: { account_id: account.account_id, email, balance: STARTER_CREDITS },
        csrf_token: browser.csrf,
      });
      // A cookie of a session that ended, or a made-up one, is not signed in either.
      const cookie = browser.cookie!;
      expect((await browser.call('POST', '/console/api/sign-out')).status).toBe(204);
      for (const stale of [cookie, `likeness_console=${'x'.repeat(43)}`]) {
        const answer = await fetch(`${service.url}/console/api/signed-in`, { headers: { cookie: stale } });
        expect({ status: answer.status, body: await answer.json() }).toEqual({
          status: 200,
          body: { signed_in: false, sign_up: true },
        });
      }
    });

    test('an expired session answers 401', async () => {
      const browser = new ConsoleClient(service);
      const { account } = await browser.signUp(uniqueEmail());
      await service.services.database.db
        .update(consoleSessions)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(consoleSessions.accountId, account.account_id));
      expect((await browser.call('GET', '/console/api/me')).status).toBe(401);
    });
  });

  describe('the cookie and CSRF locks', () => {
    test('no cookie: 401 on every console route; an API key does not open the console, nor the cookie /v1', async () => {
      const browser = new ConsoleClient(service);
      const { api_key } = await browser.signUp(uniqueEmail());
      for (const path of [
        '/console/api/me',
        '/console/api/keys',
        '/console/api/credits',
        '/console/api/identities',
        '/console/api/sessions',
      ]) {
        const anonymous = await fetch(`${service.url}${path}`);
        expect(anonymous.status).toBe(401);
        const withKey = await fetch(`${service.url}${path}`, {
          headers: { authorization: `Bearer ${api_key!.api_key}` },
        });
        expect(withKey.status).toBe(401);
      }
      const v1WithCookie = await fetch(`${service.url}/v1/identities`, { headers: { cookie: browser.cookie! } });
      expect(v1WithCookie.status).toBe(401);
    });

    test('a change without the CSRF header, or with a wrong one, answers 403 and changes nothing', async () => {
      const browser = new ConsoleClient(service);
      await browser.signUp(uniqueEmail());
      const keys = await service.count('api_keys');
      for (const csrf of [null, 'x'.repeat(32)]) {
        const response = await browser.call('POST', '/console/api/keys', { json: { name: 'ci' }, csrf });
        expect(response.status).toBe(403);
        expect(await response.json()).toEqual({ detail: 'Missing or wrong X-CSRF-Token header' });
      }
      const identities = await service.count('identities');
      const upload = await browser.call('POST', '/console/api/identities', { body: await identityForm(), csrf: null });
      expect(upload.status).toBe(403);
      expect(await service.count('identities')).toBe(identities);
      expect(await service.count('api_keys')).toBe(keys);
      // Another session's token does not fit this one.
      const other = new ConsoleClient(service);
      await other.signUp(uniqueEmail());
      expect(
        (await browser.call('POST', '/console/api/keys', { json: { name: 'ci' }, csrf: other.csrf! })).status,
      ).toBe(403);
    });
  });

  describe('keys and credits', () => {
    test('create (shown once), rename, revoke; a revoked key stops working on /v1', async () => {
      const browser = new ConsoleClient(service);
      await browser.signUp(uniqueEmail());
      const created = await browser.call('POST', '/console/api/keys', { json: { name: 'backend' } });
      expect(created.status).toBe(201);
      expect(created.headers.get('cache-control')).toBe('no-store');
      const key = (await created.json()) as { key_id: string; api_key: string; name: string; test: boolean };
      expect(key).toEqual({
        key_id: expect.stringMatching(/^key_/),
        api_key: expect.stringMatching(/^lk_[0-9A-Za-z]{43}$/),
        name: 'backend',
        test: false,
      });
      const v1 = (path: string) => fetch(`${service.url}${path}`, { headers: { 'x-api-key': key.api_key } });
      expect((await v1('/v1/identities')).status).toBe(200);

      const renamed = await browser.call('PATCH', `/console/api/keys/${key.key_id}`, {
        json: { name: 'production backend' },
      });
      expect(await renamed.json()).toMatchObject({ key_id: key.key_id, name: 'production backend', revoked_at: null });
      expect((await browser.call('PATCH', `/console/api/keys/${key.key_id}`, { json: { name: '' } })).status).toBe(422);

      expect((await browser.call('DELETE', `/console/api/keys/${key.key_id}`)).status).toBe(204);
      expect((await v1('/v1/identities')).status).toBe(401);
      expect((await browser.call('DELETE', `/console/api/keys/${key.key_id}`)).status).toBe(404);
      const listed = (await (await browser.call('GET', '/console/api/keys')).json()) as {
        key_id: string;
        revoked_at: string | null;
        last_used_at: string | null;
      }[];
      expect(listed.find((k) => k.key_id === key.key_id)).toMatchObject({
        revoked_at: expect.any(String),
        last_used_at: expect.any(String),
      });
    });

    test("another account's key is not found", async () => {
      const owner = new ConsoleClient(service);
      const { api_key } = await owner.signUp(uniqueEmail());
      const stranger = new ConsoleClient(service);
      await stranger.signUp(uniqueEmail());
      expect((await stranger.call('DELETE', `/console/api/keys/${api_key!.key_id}`)).status).toBe(404);
      expect(
        (await stranger.call('PATCH', `/console/api/keys/${api_key!.key_id}`, { json: { name: 'mine' } })).status,
      ).toBe(404);
      expect((await fetch(`${service.url}/v1/identities`, { headers: { 'x-api-key': api_key!.api_key } })).status).toBe(
        200,
      );
    });

    test("the public API's identity routes work behind the cookie, scoped to the account, and the ledger shows the onboarding charge", async () => {
      const browser = new ConsoleClient(service);
      await browser.signUp(uniqueEmail());
      const created = await browser.call('POST', '/console/api/identities', {
        body: await identityForm({ name: 'Grace', language: 'en' }),
      });
      expect(created.status).toBe(200);
      const identity = (await created.json()) as { identity_id: string; status: string };
      expect(identity.status).toBe('ready');
      const list = (await (await browser.call('GET', '/console/api/identities')).json()) as { identity_id: string }[];
      expect(list.map((i) => i.identity_id)).toEqual([identity.identity_id]);
      const credits = (await (await browser.call('GET', '/console/api/credits')).json()) as {
        balance: number;
        entries: { kind: string; amount: number; reference: string }[];
      };
      expect(credits.balance).toBe(STARTER_CREDITS - 50);
      expect(credits.entries[0]).toMatchObject({
        kind: 'onboarding',
        amount: -50,
        reference: expect.stringContaining(identity.identity_id),
      });
      // Another account sees nothing of it.
      const stranger = new ConsoleClient(service);
      await stranger.signUp(uniqueEmail());
      expect((await stranger.call('GET', `/console/api/identities/${identity.identity_id}`)).status).toBe(404);
      expect((await stranger.call('DELETE', `/console/api/identities/${identity.identity_id}`)).status).toBe(404);
      // Deleting needs the CSRF header too.
      expect(
        (await browser.call('DELETE', `/console/api/identities/${identity.identity_id}`, { csrf: null })).status,
      ).toBe(403);
      expect((await browser.call('DELETE', `/console/api/identities/${identity.identity_id}`)).status).toBe(204);
    });
  });

  test('the OpenAPI document lists the public API only', async () => {
    const document = (await (await service.call('GET', '/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths).some((path) => path.startsWith('/console'))).toBe(false);
    expect(Object.keys(document.paths)).toContain('/v1/identities');
  });
});

describe('sign-up limit per address', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('pglite', { env: { CONSOLE_SIGNUPS_PER_HOUR: '2' } });
  });
  afterAll(() => service.stop());

  test('past the hourly limit a new account answers 429 with Retry-After and nothing is created', async () => {
    await new ConsoleClient(service).signUp(uniqueEmail());
    await new ConsoleClient(service).signUp(uniqueEmail());
    const before = { accounts: await service.count('accounts'), ledger: await service.count('credit_ledger') };
    const third = await new ConsoleClient(service).call('POST', '/console/api/sign-up', {
      json: { email: uniqueEmail(), password: 'long enough password' },
    });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(3000);
    expect(await third.json()).toEqual({ detail: expect.stringContaining('Too many new accounts') });
    expect({ accounts: await service.count('accounts'), ledger: await service.count('credit_ledger') }).toEqual(before);
  });
});

describe('console pages', () => {
  const suite = suiteService('pglite');

  test('scripts and styles go gzipped to browsers that accept it, as they are to those that do not', async () => {
    const get = (path: string, encoding: string) =>
      fetch(`${suite.service.url}${path}`, {
        headers: { 'accept-encoding': encoding },
        decompress: false,
      } as RequestInit);
    for (const path of ['/console/assets/app.js', '/console/assets/app.css', '/examples/web-client/main.js']) {
      const plain = await get(path, 'identity');
      const zipped = await get(path, 'gzip, deflate, br');
      const refused = await get(path, 'gzip;q=0, br');
      expect([plain.status, zipped.status, refused.status]).toEqual([200, 200, 200]);
      expect(plain.headers.get('content-encoding')).toBeNull();
      expect(refused.headers.get('content-encoding')).toBeNull();
      expect(zipped.headers.get('content-encoding')).toBe('gzip');
      expect(zipped.headers.get('vary')).toBe('accept-encoding');
      const original = new Uint8Array(await plain.arrayBuffer());
      const compressed = new Uint8Array(await zipped.arrayBuffer());
      expect(Bun.gunzipSync(compressed)).toEqual(original);
      expect(compressed.byteLength).toBeLessThan(original.byteLength / 2);
    }
    // The page itself is small and revalidated: sent as it is.
    expect((await get('/console', 'gzip')).headers.get('content-encoding')).toBeNull();
  });
});

describe('AttemptLimiter', () => {
  const suite = suiteService('pglite');

  test('counts attempts over a sliding window; a cleared key starts again; scopes are apart', async () => {
    let now = 1_000_000;
    const limiter = new AttemptLimiter(suite.service.services.database.db, {
      scope: 'test',
      allowed: 2,
      windowSeconds: 60,
      now: () => now,
    });
    const other = new AttemptLimiter(suite.service.services.database.db, {
      scope: 'other test',
      allowed: 1,
      windowSeconds: 60,
      now: () => now,
    });
    await limiter.record('a');
    now += 10_000;
    await limiter.record('a');
    expect(await limiter.retryAfterSeconds('a')).toBe(50); // the first attempt leaves the window in 50 s
    expect(await limiter.retryAfterSeconds('b')).toBe(0);
    expect(await other.retryAfterSeconds('a')).toBe(0);
    now += 50_001;
    expect(await limiter.retryAfterSeconds('a')).toBe(0);
    await limiter.record('a');
    expect(await limiter.retryAfterSeconds('a')).toBeGreaterThan(0);
    await limiter.clear('a');
    expect(await limiter.retryAfterSeconds('a')).toBe(0);
  });
});

describe('two control-plane replicas on one Postgres', () => {
  let databaseUrl: string;
  const replicas: TestService[] = [];
  beforeAll(async () => {
    databaseUrl = await freshDatabase();
    for (let i = 0; i < 2; i++) {
      replicas.push(
        await startTestService('postgres', {
          databaseUrl,
          env: { CONSOLE_SIGNIN_FAILURES: String(FAILURES_ALLOWED), CONSOLE_SIGNUPS_PER_HOUR: '2' },
        }),
      );
    }
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
  });

  test('count the same failed sign-ins and sign-ups; the table holds no email or address', async () => {
    const [a, b] = replicas as [TestService, TestService];
    const email = uniqueEmail();
    await new ConsoleClient(a).signUp(email, 'the right password');
    for (let i = 0; i < FAILURES_ALLOWED - 1; i++)
      expect((await new ConsoleClient(a).signIn(email, `guess ${i}`)).status).toBe(401);
    expect((await new ConsoleClient(b).signIn(email, 'one more guess')).status).toBe(401);
    // Failures on both replicas add up: the next try is refused on either.
    expect((await new ConsoleClient(a).signIn(email, 'the right password')).status).toBe(429);
    expect((await new ConsoleClient(b).signIn(email, 'the right password')).status).toBe(429);
    // Sign-ups per address too: one here, one there, and the third is one too many.
    await new ConsoleClient(b).signUp(uniqueEmail(), 'the right password');
    const third = await new ConsoleClient(a).call('POST', '/console/api/sign-up', {
      json: { email: uniqueEmail(), password: 'the right password' },
    });
    expect(third.status).toBe(429);
    const rows = await a.services.database.db.select().from(limitAttempts);
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(email);
    expect(JSON.stringify(rows)).not.toContain('127.0.0.1');
  });
});
