// Visitors at the API (issue 44 point 2; docs/api.md#visitors), on both engines over a real
// LiveKit (no agent: a job's memory report is sent as a job would, with the session's report
// token): `visitor_id`, `memory` and `memory_scope` on a start (checked first; a refused start
// leaves no room, row, hold or visitor), what the dispatch carries per scope, the job's facts
// kept with when and where they were learned, GET / PATCH / DELETE scoped to the account,
// forgetting (the sessions' link too, and a running session's late report adds nothing), the
// sweep of visitors not seen for VISITOR_MEMORY_DAYS, and visitor tokens on the embed.
import { beforeAll, describe, expect, test } from 'bun:test';
import type { Static } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { VisitorResponse } from '../../src/visitors/contract.ts';
import { forgetStaleVisitors, VisitorTokens } from '../../src/visitors/index.ts';
import { visitors } from '../../src/visitors/schema.ts';
import type { IdentityBody } from '../support/forms.ts';
import { ENGINES, type TestAccount } from '../support/service.ts';
import { createIdentity, sessionRowCount } from '../support/session-start.ts';
import { suiteServiceWithWebhooks } from '../support/suite-service.ts';
import { json } from '../support/webhooks.ts';

const SHOP = 'https://shop.example';

/** As GET /v1/visitors/{id} answers (its schema's type). */
type VisitorBody = Static<typeof VisitorResponse>;

describe.each(ENGINES)('visitors at the API on %s', (engine) => {
  const suite = suiteServiceWithWebhooks(engine, ['visitor.memory_updated'], {
    livekit: 'local',
    env: { CREDITS_ONBOARDING: '0' },
    credits: 10_000,
  });
  let stranger: TestAccount;
  let ada: IdentityBody;
  let bo: IdentityBody;

  beforeAll(async () => {
    stranger = await suite.service.account({ credits: 10_000 });
    const create = async (name: string) => await createIdentity(suite.account, { name, language: 'en' });
    ada = await create('Ada');
    bo = await create('Bo');
  });
  const memoryEvents = (visitorId: string) =>
    suite.receiver
      .verified('/hooks', suite.secret)
      .filter((e) => e.type === 'visitor.memory_updated' && e.data.visitor_id === visitorId);

  const start = (body: unknown, as = suite.account) => as.call('POST', '/v1/sessions/start', json(body));
  const dispatchOf = async (room: string) => {
    const named = (await suite.service.services.livekit.dispatches.listDispatch(room)).filter((d) => d.agentName);
    return JSON.parse(named[0]!.metadata) as { memory?: { facts: string[] } | null; report_token: string };
  };
  /** Report tokens by session, read from the dispatch while its room exists. */
  const reportTokens = new Map<string, string>();
  const started = async (body: Record<string, unknown>) => {
    const answer = await start(body);
    expect(answer.status).toBe(200);
    const room = ((await answer.json()) as { room_name: string }).room_name;
    reportTokens.set(room, (await dispatchOf(room)).report_token);
    return room;
  };
  const read = async (id: string) =>
    (await (await suite.account.call('GET', `/v1/sessions/${id}`)).json()) as Record<string, unknown>;
  const visitor = (id: string, as = suite.account) => as.call('GET', `/v1/visitors/${encodeURIComponent(id)}`);
  /** The job's memory report, sent as the session's job would. */
  const reportMemory = async (room: string, facts: string[] | null) => {
    const token = reportTokens.get(room)!;
    return fetch(`${suite.service.url}/internal/sessions/${room}/reports`, {
      method: 'POST',
      body: JSON.stringify({ type: 'memory', facts, ...(facts === null && { detail: 'timed out' }) }),
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
  };
  const end = async (room: string) =>
    expect((await suite.account.call('POST', `/v1/sessions/${room}/end`)).status).toBe(200);
  const footprint = async () => ({
    rooms: (await suite.service.services.livekit.rooms.listRooms()).length,
    rows: await sessionRowCount(suite.service, suite.account.accountId),
    visitors: (
      await suite.service.services.database.db
        .select()
        .from(visitors)
        .where(eq(visitors.accountId, suite.account.accountId))
    ).length,
    balance: await suite.service.services.ledger.balance(suite.account.accountId),
  });

  test('a start’s visitor fields are checked first; refused, they leave no room, row, hold or visitor', async () => {
    const before = await footprint();
    for (const [body, loc, type] of [
      [{ visitor_id: '' }, ['body', 'visitor_id'], 'string_too_short'],
      [{ visitor_id: 'x'.repeat(129) }, ['body', 'visitor_id'], 'string_too_long'],
      [{ visitor_id: 'zofia nowak' }, ['body', 'visitor_id'], 'string_pattern_mismatch'],
      [{ visitor_id: 'a\u0000b' }, ['body', 'visitor_id'], 'string_unsafe_character'],
      [{ visitor_id: 'ü' }, ['body', 'visitor_id'], 'string_pattern_mismatch'],
      [{ visitor_id: 7 }, ['body', 'visitor_id'], 'string_type'],
      [{ visitor_id: 'v1', memory: 'yes' }, ['body', 'memory'], 'bool_type'],
      [{ visitor_id: 'v1', memory_scope: 'planet' }, ['body', 'memory_scope'], 'enum'],
      [{ memory_scope: 'account' }, ['body', 'memory_scope'], 'visitor_required'],
    ] as const) {
      const answer = await start({ identity_id: ada.identity_id, ...body });
      expect(answer.status).toBe(422);
      const problems = ((await answer.json()) as { detail: { loc: unknown[]; type: string }[] }).detail;
      expect(problems[0]).toMatchObject({ loc, type });
    }
    expect(await footprint()).toEqual(before);
  });

  test('a visitor exists from their first session; GET and lists show them; memory: false reads and keeps nothing', async () => {
    const room = await started({ identity_id: ada.identity_id, visitor_id: 'crm:42' });
    expect(await read(room)).toMatchObject({ visitor_id: 'crm:42', memory_scope: 'identity' });
    expect((await dispatchOf(room)).memory).toEqual({ facts: [] });
    const answer = await visitor('crm:42');
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as VisitorBody;
    expect(body).toMatchObject({ visitor_id: 'crm:42', facts: [] });
    expect(body.last_session_at).not.toBeNull();
    const listed = (await (await suite.account.call('GET', '/v1/visitors')).json()) as VisitorBody[];
    expect(listed.map((v) => v.visitor_id)).toContain('crm:42');
    // Another account's list and reads do not have them.
    expect(((await (await stranger.call('GET', '/v1/visitors')).json()) as VisitorBody[]).length).toBe(0);
    expect((await visitor('crm:42', stranger)).status).toBe(404);

    const off = await started({ identity_id: ada.identity_id, visitor_id: 'crm:42', memory: false });
    expect(await read(off)).toMatchObject({ visitor_id: 'crm:42', memory_scope: null });
    expect((await dispatchOf(off)).memory ?? null).toBeNull();
    expect((await reportMemory(off, ['Her name is Zofia.'])).status).toBe(200);
    expect(((await (await visitor('crm:42')).json()) as VisitorBody).facts).toEqual([]);
    const none = await started({ identity_id: ada.identity_id });
    expect(await read(none)).toMatchObject({ visitor_id: null, memory_scope: null });
    expect((await dispatchOf(none)).memory ?? null).toBeNull();
    for (const id of [room, off, none]) await end(id);
  });

  test('the job’s facts are kept per scope with when and where; the next session of that scope is dispatched with them', async () => {
    const first = await started({ identity_id: ada.identity_id, visitor_id: 'zofia@example.com' });
    await end(first);
    expect((await reportMemory(first, ['Her name is Zofia.', 'She is allergic to peanuts.'])).status).toBe(200);
    const kept = ((await (await visitor('zofia@example.com')).json()) as VisitorBody).facts;
    expect(kept).toEqual([
      { text: 'Her name is Zofia.', identity_id: ada.identity_id, learned_at: expect.any(String), session_id: first },
      {
        text: 'She is allergic to peanuts.',
        identity_id: ada.identity_id,
        learned_at: expect.any(String),
        session_id: first,
      },
    ]);
    // Announced with the scope's facts now.
    await suite.receiver.waitFor('visitor.memory_updated', () => memoryEvents('zofia@example.com')[0]);
    expect(memoryEvents('zofia@example.com')[0]!.data).toEqual({
      visitor_id: 'zofia@example.com',
      session_id: first,
      identity_id: ada.identity_id,
      facts: ['Her name is Zofia.', 'She is allergic to peanuts.'],
    });
    // Redelivered: nothing changes, and nothing is announced again.
    expect((await reportMemory(first, ['Her name is Zofia.', 'She is allergic to peanuts.'])).status).toBe(200);
    expect(((await (await visitor('zofia@example.com')).json()) as VisitorBody).facts).toEqual(kept);

    const again = await started({ identity_id: ada.identity_id, visitor_id: 'zofia@example.com' });
    expect((await dispatchOf(again)).memory).toEqual({
      facts: ['Her name is Zofia.', 'She is allergic to peanuts.'],
    });
    // Another identity's sessions do not know her; the account's shared memory is another scope.
    const withBo = await started({ identity_id: bo.identity_id, visitor_id: 'zofia@example.com' });
    expect((await dispatchOf(withBo)).memory).toEqual({ facts: [] });
    const shared = await started({
      identity_id: bo.identity_id,
      visitor_id: 'zofia@example.com',
      memory_scope: 'account',
    });
    expect((await dispatchOf(shared)).memory).toEqual({ facts: [] });
    await end(shared);
    expect((await reportMemory(shared, ['She prefers Tuesdays.'])).status).toBe(200);
    const sharedToo = await started({
      identity_id: ada.identity_id,
      visitor_id: 'zofia@example.com',
      memory_scope: 'account',
    });
    expect((await dispatchOf(sharedToo)).memory).toEqual({ facts: ['She prefers Tuesdays.'] });

    // A later session's list replaces its scope's: a fact kept keeps its first learning.
    await end(again);
    expect((await reportMemory(again, ['She is allergic to peanuts.', 'She is vegetarian.'])).status).toBe(200);
    const after = ((await (await visitor('zofia@example.com')).json()) as VisitorBody).facts;
    expect(after.map((f) => [f.text, f.identity_id, f.session_id])).toEqual([
      ['She prefers Tuesdays.', null, shared],
      ['She is allergic to peanuts.', ada.identity_id, first],
      ['She is vegetarian.', ada.identity_id, again],
    ]);
    await suite.receiver.waitFor('the third announcement', () => memoryEvents('zofia@example.com')[2]);
    // Webhooks promise no order (docs/api.md#webhooks): the second and third were seen swapped.
    const byContent = (events: unknown[][]) => events.map((e) => JSON.stringify(e)).sort();
    expect(byContent(memoryEvents('zofia@example.com').map((e) => [e.data.identity_id, e.data.facts]))).toEqual(
      byContent([
        [ada.identity_id, ['Her name is Zofia.', 'She is allergic to peanuts.']],
        [null, ['She prefers Tuesdays.']],
        [ada.identity_id, ['She is allergic to peanuts.', 'She is vegetarian.']],
      ]),
    );
    // A job that could not write them leaves them be.
    expect((await reportMemory(sharedToo, null)).status).toBe(200);
    expect(((await (await visitor('zofia@example.com')).json()) as VisitorBody).facts).toEqual(after);
    // What the job sends is bounded as the contract says.
    expect((await reportMemory(sharedToo, ['x'.repeat(301)])).status).toBe(422);
    expect(
      (
        await reportMemory(
          sharedToo,
          Array.from({ length: 21 }, (_, i) => `Fact ${i}.`),
        )
      ).status,
    ).toBe(422);
    for (const id of [withBo, sharedToo]) await end(id);
  });

  test('PATCH corrects the facts (unknown identities and too many are 422); DELETE forgets the visitor and unlinks their sessions', async () => {
    const room = await started({ identity_id: ada.identity_id, visitor_id: 'v-patch' });
    await end(room);
    await reportMemory(room, ['His name is Tom.']);
    const patch = (body: unknown, as = suite.account) => as.call('PATCH', '/v1/visitors/v-patch', json(body));
    for (const [body, loc, type] of [
      [{ facts: [{ text: 'x', identity_id: 'idn_nope' }] }, ['body', 'facts', 0, 'identity_id'], 'unknown_identity'],
      [{ facts: Array.from({ length: 21 }, (_, i) => ({ text: `F${i}` })) }, ['body', 'facts', 20], 'too_many_facts'],
      // The schema's own problems name an item by its path segment, "0".
      [{ facts: [{ text: '' }] }, ['body', 'facts', '0', 'text'], 'string_too_short'],
      [{ facts: [{ text: 'x'.repeat(301) }] }, ['body', 'facts', '0', 'text'], 'string_too_long'],
      [{}, ['body', 'facts'], 'missing'],
      [{ facts: Array.from({ length: 1_001 }, () => ({ text: 'x' })) }, ['body', 'facts'], 'array_max_items'],
    ] as const) {
      const answer = await patch(body);
      expect(answer.status).toBe(422);
      expect(((await answer.json()) as { detail: unknown[] }).detail[0]).toMatchObject({ loc, type });
    }
    expect((await patch({ facts: [] }, stranger)).status).toBe(404);
    const corrected = await patch({
      facts: [{ text: 'His name is Tom.', identity_id: ada.identity_id }, { text: 'He lives in Lisbon.' }],
    });
    expect(corrected.status).toBe(200);
    const facts = ((await corrected.json()) as VisitorBody).facts;
    expect(facts.map((f) => [f.text, f.identity_id, f.session_id])).toEqual([
      ['His name is Tom.', ada.identity_id, room],
      ['He lives in Lisbon.', null, null],
    ]);

    expect((await suite.account.call('DELETE', '/v1/visitors/v-patch')).status).toBe(204);
    expect((await visitor('v-patch')).status).toBe(404);
    expect(await read(room)).toMatchObject({ visitor_id: null, memory_scope: null });
    expect((await suite.account.call('DELETE', '/v1/visitors/v-patch')).status).toBe(404);
    expect((await stranger.call('DELETE', '/v1/visitors/crm:42')).status).toBe(404);
    expect((await visitor('crm:42')).status).toBe(200);
  });

  test('a session running when its visitor is forgotten adds nothing at its end', async () => {
    const room = await started({ identity_id: ada.identity_id, visitor_id: 'v-erased' });
    expect((await suite.account.call('DELETE', '/v1/visitors/v-erased')).status).toBe(204);
    await end(room);
    expect((await reportMemory(room, ['She is allergic to peanuts.'])).status).toBe(200);
    expect((await visitor('v-erased')).status).toBe(404);
    expect((await read(room)).visitor_id).toBeNull();
  });

  test('the sweep forgets visitors with no session for VISITOR_MEMORY_DAYS; 0 keeps them', async () => {
    const room = await started({ identity_id: ada.identity_id, visitor_id: 'v-old' });
    await end(room);
    await reportMemory(room, ['He likes jazz.']);
    const { db } = suite.service.services.database;
    const longAgo = new Date(Date.now() - 400 * 86_400_000);
    await db.update(visitors).set({ lastSessionAt: longAgo }).where(eq(visitors.id, 'v-old'));
    expect(await forgetStaleVisitors(db, 0)).toEqual([]);
    expect(await forgetStaleVisitors(db, 365)).toEqual(['v-old']);
    expect((await visitor('v-old')).status).toBe(404);
    expect((await read(room)).visitor_id).toBeNull();
    expect((await visitor('crm:42')).status).toBe(200);
  });

  test('a visitor token names the visitor on an embed; expired, forged or another account’s, it is 422 and starts nothing', async () => {
    const key = (await (
      await suite.account.call(
        'POST',
        '/v1/publishable-keys',
        json({ allowed_origins: [SHOP], identity_ids: [ada.identity_id] }),
      )
    ).json()) as { publishable_key: string };
    const embed = (body: Record<string, unknown>) =>
      suite.service.call('POST', '/v1/embed/sessions', {
        body: JSON.stringify({ identity_id: ada.identity_id, ...body }),
        headers: { authorization: `Bearer ${key.publishable_key}`, 'content-type': 'application/json', origin: SHOP },
      });
    const issued = await suite.account.call(
      'POST',
      '/v1/visitor-tokens',
      json({ visitor_id: 'shop-user-7', memory_scope: 'account', ttl_seconds: 600 }),
    );
    expect(issued.status).toBe(201);
    const token = (await issued.json()) as { visitor_token: string; expires_at: string; memory_scope: string };
    expect(token.memory_scope).toBe('account');
    expect(Date.parse(token.expires_at) - Date.now()).toBeGreaterThan(590_000);
    for (const [body, type] of [
      [{ visitor_id: 'a b' }, 'string_pattern_mismatch'],
      [{ visitor_id: 'ok', ttl_seconds: 10 }, 'greater_than_equal'],
      [{ visitor_id: 'ok', ttl_seconds: 86_401 }, 'less_than_equal'],
    ] as const) {
      const refused = await suite.account.call('POST', '/v1/visitor-tokens', json(body));
      expect(refused.status).toBe(422);
      expect(((await refused.json()) as { detail: { type: string }[] }).detail[0]!.type).toBe(type);
    }
    // A publishable key cannot make one (a known key that may not: 403, as on every secret route).
    expect(
      (
        await suite.service.call('POST', '/v1/visitor-tokens', {
          ...json({ visitor_id: 'x' }),
          headers: { authorization: `Bearer ${key.publishable_key}`, 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(403);

    const answer = await embed({ visitor_token: token.visitor_token });
    expect(answer.status).toBe(200);
    const room = ((await answer.json()) as { room_name: string }).room_name;
    expect(await read(room)).toMatchObject({ visitor_id: 'shop-user-7', memory_scope: 'account' });
    await end(room); // a key lets one visitor address run one session at a time
    // Without a token: no visitor. visitor_id itself is not the page's to say.
    const bare = ((await (await embed({ visitor_id: 'shop-user-7' })).json()) as { room_name: string }).room_name;
    expect(await read(bare)).toMatchObject({ visitor_id: null, memory_scope: null });

    const before = await footprint();
    const tokens = new VisitorTokens(suite.service.services.adminToken);
    const expired = await tokens.issue(
      { accountId: suite.account.accountId, visitorId: 'shop-user-7', memoryScope: 'identity' },
      60,
      new Date(Date.now() - 3_600_000),
    );
    const forged = await new VisitorTokens('not the admin token').issue(
      { accountId: suite.account.accountId, visitorId: 'shop-user-7', memoryScope: 'identity' },
      600,
    );
    const otherAccount = (
      (await (await stranger.call('POST', '/v1/visitor-tokens', json({ visitor_id: 'shop-user-7' }))).json()) as {
        visitor_token: string;
      }
    ).visitor_token;
    for (const [visitorToken, type] of [
      [expired.token, 'visitor_token_expired'],
      [forged.token, 'visitor_token_invalid'],
      ['not.a.jwt', 'visitor_token_invalid'],
      [otherAccount, 'visitor_token_other_account'],
    ] as const) {
      const refused = await embed({ visitor_token: visitorToken });
      expect(refused.status).toBe(422);
      expect(refused.headers.get('access-control-allow-origin')).toBe(SHOP);
      expect(((await refused.json()) as { detail: unknown[] }).detail[0]).toMatchObject({
        loc: ['body', 'visitor_token'],
        type,
      });
    }
    expect(await footprint()).toEqual(before);
    await end(bare);
  });
});
