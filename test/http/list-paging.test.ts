// Every paged list names its next page (docs/api.md#paging, src/http/paging.ts): while another
// page follows, a `Link` header with the same query and `after` moved on; the last page has
// none, so following the links walks the whole list once. Sessions and the credit ledger here;
// the identity list in test/identities/read-update-retrain-delete.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sessions } from '../../src/sessions/schema.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';

const STATUSES = ['ended', 'running', 'ended', 'ended', 'running'] as const;

describe.each(ENGINES)('paged lists on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;

  beforeAll(async () => {
    // No sweep meanwhile: the running rows below have no room, and must stay as they are.
    service = await startTestService(engine, { env: { SESSION_SWEEP_INTERVAL_SECONDS: '3600' } });
    account = await service.account({ credits: 1000 });
    const start = Date.now() - 60_000;
    await service.services.database.db.insert(sessions).values(
      STATUSES.map((status, i) => ({
        id: `ses_paging${engine}${i}`,
        accountId: account.accountId,
        avatarEnabled: true,
        language: 'en' as const,
        visualAwareness: false,
        dispatchId: `AD_paging${i}`,
        visitorIdentity: `visitor-${i}`,
        reportTokenHash: `hash-${i}`,
        maxDurationSeconds: 1800,
        status,
        createdAt: new Date(start + i * 1000),
      })),
    );
    for (let i = 0; i < 5; i++) await service.services.ledger.grant(account.accountId, 1);
  });
  afterAll(() => service?.stop());

  /** Follows the `Link` headers from `first`: each page's ids, the links, and the last answer's body. */
  async function walk<T>(first: string, idsOf: (body: T) => string[]) {
    const pages: string[][] = [];
    const links: string[] = [];
    const bodies: T[] = [];
    for (let next: string | undefined = first; next !== undefined; ) {
      const answer = await account.call('GET', next);
      expect(answer.status).toBe(200);
      const body = (await answer.json()) as T;
      bodies.push(body);
      pages.push(idsOf(body));
      const link = answer.headers.get('link');
      next = link === null ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)![1]!;
      if (link !== null) links.push(link);
    }
    return { pages, links, bodies };
  }
  const sessionIds = (body: { session_id: string }[]) => body.map((s) => s.session_id);

  test('sessions: pages of 2 name the next by Link until the last, which names none', async () => {
    const all = sessionIds((await (await account.call('GET', '/v1/sessions')).json()) as { session_id: string }[]);
    expect(all).toEqual(STATUSES.map((_, i) => `ses_paging${engine}${i}`).reverse());
    const { pages, links } = await walk('/v1/sessions?limit=2', sessionIds);
    expect(pages).toEqual([all.slice(0, 2), all.slice(2, 4), all.slice(4)]);
    expect(links).toEqual([
      `</v1/sessions?limit=2&after=${all[1]}>; rel="next"`,
      `</v1/sessions?limit=2&after=${all[3]}>; rel="next"`,
    ]);
    // A page that holds the rest, and the default page of 100: no Link.
    expect((await walk('/v1/sessions?limit=5', sessionIds)).links).toEqual([]);
    expect((await walk('/v1/sessions', sessionIds)).links).toEqual([]);
  });

  test('sessions: the status filter goes along to the next page', async () => {
    const ended = STATUSES.flatMap((status, i) => (status === 'ended' ? [`ses_paging${engine}${i}`] : [])).reverse();
    const { pages, links } = await walk('/v1/sessions?limit=2&status=ended', sessionIds);
    expect(pages).toEqual([ended.slice(0, 2), ended.slice(2)]);
    expect(links).toEqual([`</v1/sessions?limit=2&after=${ended[1]}&status=ended>; rel="next"`]);
  });

  test('the ledger: a Link exactly while has_more says another page follows', async () => {
    type Credits = { entries: { entry_id: string }[]; has_more: boolean };
    const all = ((await (await account.call('GET', '/v1/credits')).json()) as Credits).entries.map((e) => e.entry_id);
    expect(all).toHaveLength(6);
    const { pages, links, bodies } = await walk<Credits>('/v1/credits?limit=4', (body) =>
      body.entries.map((e) => e.entry_id),
    );
    expect(pages).toEqual([all.slice(0, 4), all.slice(4)]);
    expect(bodies.map((body) => body.has_more)).toEqual([true, false]);
    expect(links).toEqual([`</v1/credits?limit=4&after=${all[3]}>; rel="next"`]);
  });
});
