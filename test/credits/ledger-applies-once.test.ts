// The credit ledger: each charge applied once per reference, never below zero, even under concurrency.
import { describe, expect, test } from 'bun:test';
import { BalanceLimitExceeded, InsufficientCredits, MAX_BALANCE } from '../../src/credits/ledger.ts';
import { ENGINES } from '../support/service.ts';
import { suiteService } from '../support/suite-service.ts';

describe.each(ENGINES)('credit ledger on %s', (engine) => {
  const suite = suiteService(engine);

  test('a grant is idempotent per reference', async () => {
    const { accountId } = await suite.service.account({ credits: 0 });
    const ledger = suite.service.services.ledger;
    expect(await ledger.grant(accountId, 30, 'promo:1')).toBe(30);
    expect(await ledger.grant(accountId, 30, 'promo:1')).toBe(30);
    expect(await ledger.balance(accountId)).toBe(30);
  });

  test("a grant past the balance column's range is refused whole: no ledger row, the balance unchanged", async () => {
    const { accountId } = await suite.service.account({ credits: 100 });
    const ledger = suite.service.services.ledger;
    await expect(ledger.grant(accountId, MAX_BALANCE)).rejects.toBeInstanceOf(BalanceLimitExceeded);
    await expect(ledger.grant(accountId, MAX_BALANCE + 1)).rejects.toBeInstanceOf(BalanceLimitExceeded);
    expect(await ledger.balance(accountId)).toBe(100);
    expect((await ledger.entries(accountId)).filter((e) => e.kind === 'grant')).toHaveLength(1); // the account's own starting grant
    // Up to the limit is fine.
    expect(await ledger.grant(accountId, MAX_BALANCE - 100)).toBe(MAX_BALANCE);
  });

  test('a charge is applied once per reference', async () => {
    const { accountId } = await suite.service.account({ credits: 100 });
    const { ledger, database } = suite.service.services;
    const charge = { accountId, amount: 10, kind: 'session_minute' as const, reference: `s:${accountId}:0` };
    expect(await ledger.charge(database.db, charge)).toBe(true);
    expect(await ledger.charge(database.db, charge)).toBe(false);
    expect(await ledger.balance(accountId)).toBe(90);
    expect((await ledger.entries(accountId)).filter((e) => e.kind === 'session_minute')).toHaveLength(1);
  });

  test('a charge the balance cannot pay throws and records nothing', async () => {
    const { accountId } = await suite.service.account({ credits: 5 });
    const { ledger, database } = suite.service.services;
    const before = await ledger.entries(accountId);
    await expect(
      ledger.charge(database.db, { accountId, amount: 6, kind: 'onboarding', reference: `x:${accountId}` }),
    ).rejects.toBeInstanceOf(InsufficientCredits);
    expect(await ledger.balance(accountId)).toBe(5);
    expect(await ledger.entries(accountId)).toEqual(before);
  });

  test('concurrent charges never overspend', async () => {
    const { accountId } = await suite.service.account({ credits: 50 });
    const { ledger, database } = suite.service.services;
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        ledger.charge(database.db, { accountId, amount: 10, kind: 'session_minute', reference: `c:${accountId}:${i}` }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    expect(await ledger.balance(accountId)).toBe(0);
    const sum = (await ledger.entries(accountId)).reduce((total, e) => total + e.amount, 0);
    expect(sum).toBe(0);
  });

  test('a charge inside a failed transaction rolls back with it', async () => {
    const { accountId } = await suite.service.account({ credits: 40 });
    const { ledger, database } = suite.service.services;
    await expect(
      database.db.transaction(async (tx) => {
        await ledger.charge(tx, { accountId, amount: 10, kind: 'onboarding', reference: `r:${accountId}` });
        throw new Error('the work being paid for failed');
      }),
    ).rejects.toThrow('failed');
    expect(await ledger.balance(accountId)).toBe(40);
    expect((await ledger.entries(accountId)).some((e) => e.kind === 'onboarding')).toBe(false);
  });
});
