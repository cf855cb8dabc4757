// Text the database cannot store (issue: "A NUL byte gives a 500"). Postgres refuses U+0000 in
// text and jsonb, and jsonb a lone surrogate: such a string reaching a query was a 500, and the
// error's log line wrote the query's values, an API key's hash among them. Here each is sent in
// every path parameter, query parameter, body field and field name of every operation of
// /openapi.json, through both doors (an API key at /v1, the console's cookie at /console/api),
// and of the console's and the admin API's own routes: no answer may be a 500. The refusals are
// a 422 naming the field (`string_unsafe_character`), or the 404 of an unknown id for a path id.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { hashApiKey } from '../../src/auth/api-keys.ts';
import { configureLogging, log } from '../../src/logging/index.ts';
import { type IdentityBody, identityForm } from '../support/forms.ts';
import {
  adminRoutes,
  consoleRoutes,
  type DocumentOperation,
  deletesLast,
  described,
  encoded,
  PASSWORD,
  probesOf,
  type Route,
  rawRequest,
  routesOf,
} from '../support/route-probes.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';

describe.each(ENGINES)('text the database cannot store, on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let identity: IdentityBody;
  let webhookId: string;
  let browser: { cookie: string; csrf: string; email: string; keyId: string };
  beforeAll(async () => {
    service = await startTestService(engine, {
      env: { CONSOLE_SIGNUPS_PER_HOUR: '1000', WEBHOOKS_ALLOW_PRIVATE: 'true' },
      // Every webhook host is this machine, on ports where nothing listens: a test delivery fails at once.
      overrides: { webhookResolver: async () => ['127.0.0.1'] },
    });
    account = await service.account({ credits: 100_000 });
    identity = (await (
      await account.call('POST', '/v1/identities', { body: await identityForm() })
    ).json()) as IdentityBody;
    const webhook = await account.call('POST', '/v1/webhooks', {
      body: JSON.stringify({ url: 'http://hooks.example.com:9/likeness', events: ['session.ended'] }),
      headers: { 'content-type': 'application/json' },
    });
    webhookId = ((await webhook.json()) as { webhook_id: string }).webhook_id;
    const email = `console-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const signUp = await fetch(`${service.url}/console/api/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    const signedUp = (await signUp.json()) as { csrf_token: string; api_key: { key_id: string } };
    browser = {
      cookie: signUp.headers.get('set-cookie')!.split(';')[0]!,
      csrf: signedUp.csrf_token,
      email,
      keyId: signedUp.api_key.key_id,
    };
  }, 60_000);
  afterAll(() => service.stop());

  test('every body in the OpenAPI document says what it is (a body the sweep cannot see is not swept)', async () => {
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, DocumentOperation>>;
    };
    const undescribed = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => operation.requestBody && !Object.keys(operation.requestBody.content ?? {}).length)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(undescribed).toEqual([]);
  });

  test('NUL and lone surrogates in every part of every route: never a 500', async () => {
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, DocumentOperation>>;
    };
    const ids = {
      identity_id: identity.identity_id,
      webhook_id: webhookId,
      session_id: 'ses_unknown',
      key_id: browser.keyId,
    };
    const documented = deletesLast(await routesOf(document));
    expect(documented.length).toBeGreaterThan(20);
    const doors: { routes: Route[]; prefix: (path: string) => string; headers: Record<string, string> }[] = [
      { routes: documented, prefix: (path: string) => path, headers: { authorization: `Bearer ${account.apiKey}` } },
      // The console's twins of the same routes, behind its cookie.
      {
        routes: documented,
        prefix: (path: string) => path.replace(/^\/v1\//, '/console/api/'),
        headers: { cookie: browser.cookie, 'x-csrf-token': browser.csrf },
      },
      {
        routes: consoleRoutes(browser.email),
        prefix: (path: string) => path,
        headers: { cookie: browser.cookie, 'x-csrf-token': browser.csrf },
      },
      {
        routes: adminRoutes(account.accountId),
        prefix: (path: string) => path,
        headers: { authorization: `Bearer ${service.services.adminToken}` },
      },
    ];
    const failures: string[] = [];
    const accepted: string[] = [];
    let sent = 0;
    for (const door of doors) {
      for (const route of door.routes) {
        for (const probe of probesOf(route, ids)) {
          const path = door.prefix(probe.path);
          const { body, headers } = encoded(probe);
          const response = await fetch(`${service.url}${path}`, {
            method: probe.method,
            body,
            headers: { ...door.headers, ...headers },
          });
          sent++;
          if (response.status >= 500) failures.push(`${response.status} ← ${described({ ...probe, path })}`);
          if (response.status < 400) accepted.push(`${response.status} ← ${described({ ...probe, path })}`);
          await response.arrayBuffer();
        }
      }
    }
    expect(sent).toBeGreaterThan(200);
    expect(failures).toEqual([]);
    // Nor is any taken: each is refused before it reaches a query (and changes nothing).
    expect(accepted).toEqual([]);
  }, 120_000);

  test('the refusals: 404 for a path id, 422 naming the field for the rest', async () => {
    const unsafe = (loc: (string | number)[]) => ({
      detail: [{ loc, msg: expect.any(String), type: 'string_unsafe_character' }],
    });
    const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    const answer = async (response: Response) => [response.status, await response.json()];

    expect(await answer(await account.call('GET', '/v1/identities/idn_%00abc'))).toEqual([
      404,
      { detail: 'Identity not found' },
    ]);
    for (const path of ['/v1/sessions/ses_%00', '/v1/webhooks/%00/deliveries'])
      expect((await account.call('GET', path)).status).toBe(404);
    expect(await answer(await account.call('GET', '/v1/identities?after=%00'))).toEqual([
      422,
      unsafe(['query', 'after']),
    ]);
    expect(await answer(await account.call('GET', '/v1/credits?after=%00'))).toEqual([422, unsafe(['query', 'after'])]);
    expect(await answer(await account.call('GET', '/v1/voices?anything=a%00'))).toEqual([
      422,
      unsafe(['query', 'anything']),
    ]);
    expect(await answer(await account.call('POST', '/v1/sessions/start', json({ identity_id: 'idn_\u0000' })))).toEqual(
      [422, unsafe(['body', 'identity_id'])],
    );
    expect(
      await answer(
        await account.call(
          'POST',
          '/v1/webhooks',
          json({ url: 'http://hooks.example.com:9/', events: ['session.ended'], description: 'Billing \ud800' }),
        ),
      ),
    ).toEqual([422, unsafe(['body', 'description'])]);
    expect(
      await answer(
        await account.call('PATCH', `/v1/webhooks/${webhookId}`, json({ enabled: true, 'dark\u0000key': 1 })),
      ),
    ).toEqual([422, unsafe(['body', 'dark\u0000key'])]);
    expect(
      await answer(
        await account.call('PATCH', `/v1/identities/${identity.identity_id}`, {
          body: await identityForm({ image: undefined, prompt: 'Hi \u0000' }),
        }),
      ),
    ).toEqual([422, unsafe(['body', 'prompt'])]);
    // Bodies Elysia's own parsers read: JSON sent as text/plain to a JSON route, a urlencoded form.
    expect(
      await answer(
        await account.call('POST', '/v1/sessions/start', {
          body: JSON.stringify({ identity_id: 'idn_\u0000' }),
          headers: { 'content-type': 'text/plain' },
        }),
      ),
    ).toEqual([422, unsafe(['body', 'identity_id'])]);
    const urlencoded = await fetch(`${service.url}/internal/admin/keys`, {
      method: 'POST',
      body: `account_id=${account.accountId}%00&name=ci`,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Bearer ${service.services.adminToken}`,
      },
    });
    expect(await answer(urlencoded)).toEqual([422, unsafe(['body', 'account_id'])]);
    // The console's sign-in takes no credentials: the first door a stranger finds.
    const signIn = await fetch(`${service.url}/console/api/sign-in`, {
      method: 'POST',
      ...json({ email: `a\u0000${browser.email}`, password: 'x' }),
    });
    expect(await answer(signIn)).toEqual([422, unsafe(['body', 'email'])]);
    // Without credentials, a credential's answer comes first.
    expect((await fetch(`${service.url}/v1/identities/idn_%00`)).status).toBe(401);
  });

  test('headers used as data: control bytes are refused by the HTTP server, other bytes are a wrong key or an id echoed', async () => {
    const get = (header: string) => rawRequest(service.url, `GET /v1/identities HTTP/1.1\r\n${header}\r\n`);
    expect(await get('X-API-Key: lk_\x00abc')).toStartWith('HTTP/1.1 400');
    expect(await get(`Authorization: Bearer ${account.apiKey}\x01`)).toStartWith('HTTP/1.1 400');
    expect(await get('Cookie: likeness_console=\x00')).toStartWith('HTTP/1.1 400');
    expect(await get(`X-API-Key: lk_${'\xff'.repeat(43)}`)).toStartWith('HTTP/1.1 401');
    const echoed = await get(`Authorization: Bearer ${account.apiKey}\r\nX-Request-Id: req-\xff\x7f`);
    expect(echoed).toStartWith('HTTP/1.1 200');
    expect(echoed).toContain('x-request-id: req-\xff\x7f\r\n');
  });

  test('the log of a failed query carries no values: an API key hash never reaches it', async () => {
    const lines: string[] = [];
    configureLogging({ level: 'info', format: 'json' }, { write: (line: string) => void lines.push(line) });
    const db = service.services.database.db;
    await db.execute(sql`alter table api_keys rename to api_keys_away`);
    try {
      expect((await account.call('GET', '/v1/voices')).status).toBe(500);
      // And an error logged by hand, with a cause carrying values of its own.
      const cause = Object.assign(new Error('connection lost'), {
        params: ['cause-secret'],
        severity: 'ERROR',
        detail: 'Key (key_hash)=(row-secret) already exists.',
      });
      log.error({ err: new DrizzleQueryError('select 1 where $1', ['query-secret'], cause) }, 'by hand');
    } finally {
      await db.execute(sql`alter table api_keys_away rename to api_keys`);
      configureLogging({ level: 'warn', format: 'json' });
    }
    const failed = lines
      .map((line) => JSON.parse(line) as { msg: string; err?: Record<string, unknown> })
      .find((line) => line.msg === 'request failed');
    expect(failed?.err).toMatchObject({
      message: expect.stringContaining('Failed query: select'),
      stack: expect.any(String),
    });
    expect(failed?.err).not.toHaveProperty('params');
    const written = lines.join('\n');
    expect(written).toContain('by hand');
    for (const secret of [hashApiKey(account.apiKey), 'query-secret', 'cause-secret', 'row-secret'])
      expect(written).not.toContain(secret);
  });
});
