// A website's start (issue 34 point 1; docs/api.md#embed-start) on both engines, over a real
// LiveKit: the publishable key starts sessions of its identities from its origins only, with
// CORS for that origin (refusals readable by the page), within its limits per key and per
// visitor address (429 + Retry-After); its sessions are the account's, charged to it and
// marked with the key; the iframe page's start names its embedder; a refusal leaves nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { EMBEDDER_HEADER } from '../../src/embed/index.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { type IdentityBody, identityForm } from '../support/forms.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { json } from '../support/webhooks.ts';

const SHOP = 'https://shop.example';

interface Started {
  session_id: string;
  room_name: string;
  token: string;
  rtc_url: string;
  visual_awareness: boolean;
  max_duration_seconds: number;
  test: boolean;
}

describe.each(ENGINES)('starting from a website on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let identity: IdentityBody;
  let other: IdentityBody;
  let visitor = 0;

  beforeAll(async () => {
    service = await startTestService(engine, {
      livekit: 'local',
      // The visitor's address is X-Forwarded-For's, as behind the operator's proxy.
      env: { CREDITS_ONBOARDING: '0', CREDITS_PER_AVATAR_MINUTE: '10', TRUSTED_PROXIES: '127.0.0.1' },
    });
    account = await service.account({ credits: 10_000 });
    identity = (await (
      await account.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) })
    ).json()) as IdentityBody;
    other = (await (
      await account.call('POST', '/v1/identities', { body: await identityForm({ name: 'Bo', language: 'en' }) })
    ).json()) as IdentityBody;
  });
  afterAll(() => service.stop());

  const makeKey = async (owner: TestAccount, body: Record<string, unknown> = {}) => {
    const answer = await owner.call(
      'POST',
      '/v1/publishable-keys',
      json({ allowed_origins: [SHOP], identity_ids: [identity.identity_id], ...body }),
    );
    expect(answer.status).toBe(201);
    return (await answer.json()) as { publishable_key: string; publishable_key_id: string };
  };
  const start = (
    key: string,
    body: Record<string, unknown> = { identity_id: identity.identity_id },
    headers: Record<string, string> = {},
    from = `203.0.113.${++visitor}`,
  ) =>
    service.call('POST', '/v1/embed/sessions', {
      body: JSON.stringify(body),
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        origin: SHOP,
        'x-forwarded-for': from,
        ...headers,
      },
    });
  const sessionRows = async () =>
    service.services.database.db.select().from(sessions).where(eq(sessions.accountId, account.accountId));

  test('the preflight lets any page ask; the start answers its origin with a room to join', async () => {
    const preflight = await service.call('OPTIONS', '/v1/embed/sessions', {
      headers: {
        origin: SHOP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');

    const key = await makeKey(account);
    const balance = await service.services.ledger.balance(account.accountId);
    const answer = await start(key.publishable_key, { identity_id: identity.identity_id, form_factor: 'phone' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe(SHOP);
    const started = (await answer.json()) as Started;
    expect(started.token.split('.')).toHaveLength(3);
    expect(started.rtc_url).toMatch(/^wss?:\/\//);
    expect(started.test).toBe(false);
    expect(started.max_duration_seconds).toBe(service.config.sessions.maxDurationSeconds);
    // The account's session, marked with the key, its first minute held from the account's credits.
    const read = (await (await account.call('GET', `/v1/sessions/${started.session_id}`)).json()) as Record<
      string,
      unknown
    >;
    expect(read.publishable_key_id).toBe(key.publishable_key_id);
    expect(read.identity_id).toBe(identity.identity_id);
    expect(read.form_factor).toBe('phone');
    expect(await service.services.ledger.balance(account.accountId)).toBe(balance! - 10);
    const rooms = await service.services.livekit.rooms.listRooms([started.room_name]);
    expect(rooms).toHaveLength(1);
    const keyRead = (await (await account.call('GET', `/v1/publishable-keys/${key.publishable_key_id}`)).json()) as {
      last_used_at: string | null;
    };
    expect(keyRead.last_used_at).not.toBeNull();
    await account.call('POST', `/v1/sessions/${started.session_id}/end`);
  });

  test('refusals are readable by the page and leave no session, room or charge', async () => {
    const key = await makeKey(account);
    const before = {
      rows: (await sessionRows()).length,
      balance: await service.services.ledger.balance(account.accountId),
    };
    const cases: [string, Response, number, string][] = [
      [
        'another origin',
        await start(key.publishable_key, undefined, { origin: 'https://evil.example' }),
        403,
        'https://evil.example',
      ],
      [
        'an identity not on the key',
        await start(key.publishable_key, { identity_id: other.identity_id }),
        403,
        other.identity_id,
      ],
      ['an unknown key', await start(`lk_pub_${'x'.repeat(43)}`), 401, 'publishable key'],
      ['a secret key', await start(account.apiKey), 401, 'publishable key'],
      [
        'the iframe page without its embedder',
        await start(key.publishable_key, undefined, { origin: new URL(service.url).origin }),
        403,
        'framed',
      ],
      [
        'the iframe page framed by another site',
        await start(key.publishable_key, undefined, {
          origin: new URL(service.url).origin,
          [EMBEDDER_HEADER]: 'https://evil.example',
        }),
        403,
        'https://evil.example',
      ],
    ];
    for (const [what, answer, status, mention] of cases) {
      expect({ what, status: answer.status }).toEqual({ what, status });
      expect(((await answer.json()) as { detail: string }).detail).toContain(mention);
    }
    // No Origin at all: not a page.
    const server = await service.call('POST', '/v1/embed/sessions', {
      body: JSON.stringify({ identity_id: identity.identity_id }),
      headers: { authorization: `Bearer ${key.publishable_key}`, 'content-type': 'application/json' },
    });
    expect(server.status).toBe(403);
    expect(((await server.json()) as { detail: string }).detail).toContain('no Origin');
    // A revoked key.
    await account.call('DELETE', `/v1/publishable-keys/${key.publishable_key_id}`);
    expect((await start(key.publishable_key)).status).toBe(401);
    expect({
      rows: (await sessionRows()).length,
      balance: await service.services.ledger.balance(account.accountId),
    }).toEqual(before);
  });

  test("a refusal for the page's origin still carries that origin, so the page can read why", async () => {
    const key = await makeKey(account);
    const answer = await start(key.publishable_key, { identity_id: other.identity_id });
    expect(answer.status).toBe(403);
    expect(answer.headers.get('access-control-allow-origin')).toBe(SHOP);
  });

  test('the iframe page starts with the embedding page named as its embedder', async () => {
    const key = await makeKey(account);
    const answer = await start(key.publishable_key, undefined, {
      origin: new URL(service.url).origin,
      [EMBEDDER_HEADER]: SHOP,
    });
    expect(answer.status).toBe(200);
    const { session_id } = (await answer.json()) as Started;
    await account.call('POST', `/v1/sessions/${session_id}/end`);
  });

  test('limits per visitor and per key answer 429 with Retry-After; other visitors go on until the key is full', async () => {
    const key = await makeKey(account, {
      limits: {
        concurrent_sessions: 2,
        visitor_concurrent_sessions: 1,
        sessions_per_minute: 100,
        visitor_sessions_per_minute: 100,
      },
    });
    const first = await start(key.publishable_key, undefined, {}, '198.51.100.1');
    expect(first.status).toBe(200);
    const again = await start(key.publishable_key, undefined, {}, '198.51.100.1');
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(again.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(((await again.json()) as { detail: string }).detail).toContain('open with this site already');
    expect((await start(key.publishable_key, undefined, {}, '198.51.100.2')).status).toBe(200);
    const full = await start(key.publishable_key, undefined, {}, '198.51.100.3');
    expect(full.status).toBe(429);
    expect(((await full.json()) as { detail: string }).detail).toContain("This site's key has 2 conversations running");

    // Starts per minute, per visitor: ending sessions does not reset the window.
    const perMinute = await makeKey(account, {
      limits: { visitor_sessions_per_minute: 2, visitor_concurrent_sessions: 5 },
    });
    for (let i = 0; i < 2; i++) {
      const answer = await start(perMinute.publishable_key, undefined, {}, '198.51.100.9');
      expect(answer.status).toBe(200);
      await account.call('POST', `/v1/sessions/${((await answer.json()) as Started).session_id}/end`);
    }
    const third = await start(perMinute.publishable_key, undefined, {}, '198.51.100.9');
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(third.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    for (const row of await sessionRows())
      if (row.status === 'running') await account.call('POST', `/v1/sessions/${row.id}/end`);
  });

  test('parallel starts of one visitor pass the limit once', async () => {
    const key = await makeKey(account, { limits: { visitor_concurrent_sessions: 1 } });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => start(key.publishable_key, undefined, {}, '198.51.100.77')),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 429, 429, 429, 429, 429]);
    for (const row of await sessionRows())
      if (row.status === 'running') await account.call('POST', `/v1/sessions/${row.id}/end`);
  });

  test("a key's sessions are charged to its account: without credits, 402", async () => {
    const poor = await service.account({ credits: 0 });
    const theirs = (await (
      await poor.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) })
    ).json()) as IdentityBody;
    const key = await makeKey(poor, { identity_ids: [theirs.identity_id] });
    const answer = await start(key.publishable_key, { identity_id: theirs.identity_id });
    expect(answer.status).toBe(402);
    expect(answer.headers.get('access-control-allow-origin')).toBe(SHOP);
  });
});
