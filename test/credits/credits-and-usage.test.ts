// GET /v1/credits (the balance and its ledger, paged) and GET /v1/usage (sessions, avatar
// minutes, identities and credits per UTC day or hour), on both engines: what an account
// spent shows where and when it was spent, and nothing of another account's.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { creditLedger } from '../../src/credits/schema.ts';
// The counts GET /v1/usage answers, as the service sums them.
import type { UsageCounts as Counts } from '../../src/credits/usage.ts';
import { createAstronaut, startSession } from '../avatar/support.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';

const ONBOARDING = 50;
const PER_MINUTE = 10;
const DAY = 86_400_000;

interface Credits {
  balance: number;
  entries: { entry_id: string; kind: string; amount: number; reference: string; created_at: string }[];
  has_more: boolean;
  low_balance_threshold: number;
}
interface Usage {
  from: string;
  to: string;
  granularity: string;
  buckets: (Counts & { start: string })[];
  totals: Counts;
}

describe.each(ENGINES)('credits and usage on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let other: TestAccount;
  let room = '';

  beforeAll(async () => {
    service = await startTestService(engine, {
      livekit: 'local',
      env: { CREDITS_ONBOARDING: String(ONBOARDING), CREDITS_PER_AVATAR_MINUTE: String(PER_MINUTE) },
    });
    account = await service.account({ credits: 1_000 });
    other = await service.account({ credits: 300 });
    // Spending: an identity, a session with two billed minutes (charged here as its job would).
    const identity = await createAstronaut(account, { language: 'en' });
    room = (await startSession(account, { identity_id: identity.identity_id })).room_name;
    expect(await service.services.billing.chargeMinute(room, 0)).toBe('charged');
    expect(await service.services.billing.chargeMinute(room, 1)).toBe('charged');
  }, 60_000);
  afterAll(() => service?.stop());

  const get = async <T>(who: TestAccount, path: string) => {
    const answer = await who.call('GET', path);
    expect(answer.status).toBe(200);
    return (await answer.json()) as T;
  };

  test('/v1/credits: the balance and every entry that made it, newest first', async () => {
    const credits = await get<Credits>(account, '/v1/credits');
    expect(credits.balance).toBe(1_000 - ONBOARDING - 2 * PER_MINUTE);
    expect(credits.has_more).toBe(false);
    // grant, onboarding, the start's hold, its release at the first minute, two minutes.
    expect(credits.entries.map((e) => e.kind).sort()).toEqual(
      ['grant', 'onboarding', 'session_hold', 'session_minute', 'session_minute', 'session_release'].sort(),
    );
    expect(credits.entries.reduce((sum, e) => sum + e.amount, 0)).toBe(credits.balance);
    expect(credits.entries.at(-1)!.kind).toBe('grant');
    const times = credits.entries.map((e) => Date.parse(e.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(credits.entries.find((e) => e.kind === 'session_minute')!.reference).toContain(room);
    // Another account sees only its own.
    const theirs = await get<Credits>(other, '/v1/credits');
    expect(theirs).toEqual({
      balance: 300,
      entries: [expect.objectContaining({ kind: 'grant', amount: 300 })],
      has_more: false,
      low_balance_threshold: 100,
    });
  });

  test('PATCH /v1/credits sets this account’s low-balance threshold (credits.low), shown by GET; bad values answer 422', async () => {
    const patch = (who: TestAccount, body: unknown) =>
      who.call('PATCH', '/v1/credits', { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    const answer = await patch(account, { low_balance_threshold: 250 });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ balance: 1_000 - ONBOARDING - 2 * PER_MINUTE, low_balance_threshold: 250 });
    expect((await get<{ low_balance_threshold: number }>(account, '/v1/credits')).low_balance_threshold).toBe(250);
    expect((await get<{ low_balance_threshold: number }>(other, '/v1/credits')).low_balance_threshold).toBe(100);
    for (const bad of [
      { low_balance_threshold: -1 },
      { low_balance_threshold: 1.5 },
      { low_balance_threshold: 'ten' },
      {},
    ]) {
      const refused = await patch(account, bad);
      expect(refused.status).toBe(422);
      expect(((await refused.json()) as { detail: { loc: string[] }[] }).detail[0]!.loc).toContain(
        'low_balance_threshold',
      );
    }
    expect((await patch(account, { low_balance_threshold: 0 })).status).toBe(200);
    expect((await get<{ low_balance_threshold: number }>(account, '/v1/credits')).low_balance_threshold).toBe(0);
  });

  test("/v1/credits pages with limit and after; a cursor not in the caller's ledger answers 422", async () => {
    const all = (await get<Credits>(account, '/v1/credits')).entries;
    const pages: Credits['entries'] = [];
    let after = '';
    for (;;) {
      const page = await get<Credits>(account, `/v1/credits?limit=4${after ? `&after=${after}` : ''}`);
      pages.push(...page.entries);
      if (!page.has_more) break;
      after = page.entries.at(-1)!.entry_id;
    }
    expect(pages).toEqual(all);
    const foreign = (await get<Credits>(other, '/v1/credits')).entries[0]!.entry_id;
    for (const cursor of [foreign, 'led_nosuchentry']) {
      const answer = await account.call('GET', `/v1/credits?after=${cursor}`);
      expect(answer.status).toBe(422);
      expect(((await answer.json()) as { detail: { loc: string[]; type: string }[] }).detail).toEqual([
        expect.objectContaining({ loc: ['query', 'after'], type: 'unknown_cursor' }),
      ]);
    }
    expect((await account.call('GET', '/v1/credits?limit=0')).status).toBe(422);
    expect((await fetch(`${service.url}/v1/credits`)).status).toBe(401);
  });

  test('/v1/usage by day: every day of the last 30, today holding what was spent; totals add up', async () => {
    const usage = await get<Usage>(account, '/v1/usage');
    expect(usage.granularity).toBe('day');
    expect(usage.buckets.length).toBeGreaterThanOrEqual(30);
    expect(usage.buckets.length).toBeLessThanOrEqual(31);
    for (const [i, bucket] of usage.buckets.entries()) {
      expect(bucket.start).toBe(new Date(Date.parse(usage.buckets[0]!.start) + i * DAY).toISOString());
    }
    expect(usage.buckets[0]!.start).toEndWith('T00:00:00.000Z');
    const today = usage.buckets.at(-1)!;
    expect(today.start).toBe(`${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`);
    // All of the account's use is today's, so the totals are today's bucket.
    const spentToday = {
      sessions: 1,
      avatar_minutes: 2,
      visitor_seconds: 0,
      streamed_seconds: 0,
      identities: 1,
      credits_spent: { onboarding: ONBOARDING, session_minute: 2 * PER_MINUTE, recorded_minute: 0 },
      credits_granted: 1_000,
    };
    expect(today).toEqual({ start: today.start, ...spentToday });
    expect(usage.totals).toEqual(spentToday);
    const theirs = await get<Usage>(other, '/v1/usage');
    expect(theirs.totals).toEqual({
      sessions: 0,
      avatar_minutes: 0,
      visitor_seconds: 0,
      streamed_seconds: 0,
      identities: 0,
      credits_spent: { onboarding: 0, session_minute: 0, recorded_minute: 0 },
      credits_granted: 300,
    });
  });

  test('/v1/usage counts by when things happened: a range before them is empty; hours split a day', async () => {
    // The other account's grant, moved 40 days back: out of the default range, in an explicit one.
    await service.services.database.db
      .update(creditLedger)
      .set({ createdAt: new Date(Date.now() - 40 * DAY) })
      .where(eq(creditLedger.accountId, other.accountId));
    expect((await get<Usage>(other, '/v1/usage')).totals.credits_granted).toBe(0);
    const day = new Date(Date.now() - 40 * DAY).toISOString().slice(0, 10);
    const then = await get<Usage>(other, `/v1/usage?from=${day}&to=${day}T23:59:59Z`);
    expect(then.buckets).toHaveLength(1);
    expect(then.totals.credits_granted).toBe(300);

    const from = new Date(Date.now() - 2 * 3_600_000).toISOString();
    const hourly = await get<Usage>(account, `/v1/usage?granularity=hour&from=${from}`);
    expect(hourly.granularity).toBe('hour');
    expect(hourly.buckets.length).toBe(3);
    expect(hourly.buckets[0]!.start).toEndWith(':00:00.000Z');
    expect(hourly.buckets.at(-1)!.avatar_minutes).toBe(2);
    expect(hourly.totals.sessions).toBe(1);
  });

  test('/v1/usage refuses what it cannot answer with 422 naming the field', async () => {
    const cases: [string, string, string][] = [
      ['from=yesterday', 'from', 'invalid_datetime'],
      ['to=2026-13-45', 'to', 'invalid_datetime'],
      ['from=2026-11-10&to=2026-11-01', 'to', 'range_empty'],
      ['granularity=hour&from=2026-01-01&to=2026-03-01', 'from', 'range_too_long'],
      ['from=2020-01-01&to=2026-01-01', 'from', 'range_too_long'],
    ];
    for (const [query, field, type] of cases) {
      const answer = await account.call('GET', `/v1/usage?${query}`);
      expect([query, answer.status]).toEqual([query, 422]);
      expect(((await answer.json()) as { detail: { loc: string[]; type: string }[] }).detail).toEqual([
        expect.objectContaining({ loc: ['query', field], type }),
      ]);
    }
    const week = await account.call('GET', '/v1/usage?granularity=week');
    expect(week.status).toBe(422);
    expect(JSON.stringify(await week.json())).toContain('granularity');
  });
});
