// Test mode (docs/api.md#test-mode): an account's test keys (`lk_test_…`) reach a second account,
// its test account, created on first use. Everything a test key makes lives there, so the
// account scoping every query already keeps live and test apart in both directions; what
// differs is the price (nothing), the session length (short) and the "TEST" mark on the
// video. What bounds an owner is its live account alone: its limits, balance and fair share
// count and gate both accounts together (ownerAccountIds, docs/decisions.md#embed-and-test-mode).
// The test account's id is the live one's with `acc_test_`: a live id is `acc_` and base62, so
// the two never collide, and any code holding an account id knows its mode.
import { eq } from 'drizzle-orm';
import { t } from 'elysia';
import type { Queryable } from '../db/index.ts';
import { accounts } from './schema.ts';

const LIVE_PREFIX = 'acc_';
const TEST_PREFIX = 'acc_test_';

/** Whether this account is a test account (its resources are test resources). */
export function isTestAccount(accountId: string): boolean {
  return accountId.startsWith(TEST_PREFIX);
}

/** The test account of a live account. */
export function testAccountIdOf(liveAccountId: string): string {
  if (isTestAccount(liveAccountId)) return liveAccountId;
  return `${TEST_PREFIX}${liveAccountId.slice(LIVE_PREFIX.length)}`;
}

/** The live account a test account belongs to (itself for a live one). */
export function liveAccountIdOf(accountId: string): string {
  return isTestAccount(accountId) ? `${LIVE_PREFIX}${accountId.slice(TEST_PREFIX.length)}` : accountId;
}

/**
 * Both accounts of the owner of `accountId`, live first: what its limits and fair share count
 * together, so a test key cannot double what the operator allows the live one.
 */
export function ownerAccountIds(accountId: string): [live: string, test: string] {
  const live = liveAccountIdOf(accountId);
  return [live, testAccountIdOf(live)];
}

/** The live account's test account, created when it has none yet; in the caller's transaction. */
export async function ensureTestAccount(q: Queryable, liveAccountId: string): Promise<string> {
  const id = testAccountIdOf(liveAccountId);
  await q.insert(accounts).values({ id, email: null, testOf: liveAccountId }).onConflictDoNothing();
  return id;
}

/** The live account and, once made, its test account: what the live account's console shows keys of. */
export async function accountsOfOwner(q: Queryable, liveAccountId: string): Promise<string[]> {
  const [test] = await q
    .select({ id: accounts.id })
    .from(accounts)
    .where(eq(accounts.id, testAccountIdOf(liveAccountId)));
  return test ? [liveAccountId, test.id] : [liveAccountId];
}

/** `test` in every read of a resource (docs/api.md#test-mode). */
export const TestFlag = t.Boolean({
  description: 'A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.',
  examples: [false],
});
