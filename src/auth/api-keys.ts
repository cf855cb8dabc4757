// API keys: `lk_` + 43 base62 characters (256 random bits); test keys `lk_test_` + 43, kept on
// the account's test account (src/accounts/test-mode.ts). Only a SHA-256 of the key is
// stored: the key has full entropy, so a slow password hash would add latency and no safety.
import { and, desc, eq, inArray, isNull } from 'drizzle-orm';
import { accountsOfOwner, ensureTestAccount, isTestAccount } from '../accounts/index.ts';
import { apiKeys } from '../accounts/schema.ts';
import { sha256Hex } from '../contract/index.ts';
import { newId, randomBase62 } from '../db/ids.ts';
import type { Queryable } from '../db/index.ts';

export const API_KEY_PATTERN = /^lk_(test_)?[0-9A-Za-z]{43}$/;
export const TEST_KEY_PREFIX = 'lk_test_';
/** A publishable key's (src/publishable-keys/): it may only start sessions from a page. */
export const PUBLISHABLE_KEY_PREFIX = 'lk_pub_';

export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

export interface IssuedKey {
  key_id: string;
  api_key: string;
}

/**
 * A new secret key of a live account; `test`: a test key, on its test account (made on first
 * use). In the caller's transaction when given one.
 */
export async function issueApiKey(
  q: Queryable,
  accountId: string,
  name?: string,
  options: { test?: boolean } = {},
): Promise<IssuedKey & { test: boolean }> {
  const test = options.test === true;
  const owner = test ? await ensureTestAccount(q, accountId) : accountId;
  const apiKey = `${test ? TEST_KEY_PREFIX : 'lk_'}${randomBase62(43)}`;
  const id = newId('key');
  await q.insert(apiKeys).values({
    id,
    accountId: owner,
    name: name ?? null,
    keyHash: hashApiKey(apiKey),
    // Enough to tell keys apart: the mode's prefix and four characters.
    keyPrefix: apiKey.slice(0, (test ? TEST_KEY_PREFIX.length : 3) + 4),
  });
  return { key_id: id, api_key: apiKey, test };
}

export interface KeySummary {
  key_id: string;
  name: string | null;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** A test key (`lk_test_…`): its resources are test resources. */
  test: boolean;
}

/** A live account's keys, its test keys among them. */
export async function listApiKeys(q: Queryable, accountId: string): Promise<KeySummary[]> {
  const rows = await q
    .select()
    .from(apiKeys)
    .where(inArray(apiKeys.accountId, await accountsOfOwner(q, accountId)))
    .orderBy(desc(apiKeys.createdAt));
  return rows.map(keySummary);
}

function keySummary(r: typeof apiKeys.$inferSelect): KeySummary {
  return {
    key_id: r.id,
    name: r.name,
    prefix: r.keyPrefix,
    created_at: r.createdAt.toISOString(),
    last_used_at: r.lastUsedAt?.toISOString() ?? null,
    revoked_at: r.revokedAt?.toISOString() ?? null,
    test: isTestAccount(r.accountId),
  };
}

/** Rename a key of the account (revoked ones too); undefined when there is no such key. */
export async function renameApiKey(
  q: Queryable,
  accountId: string,
  keyId: string,
  name: string,
): Promise<KeySummary | undefined> {
  const [row] = await q
    .update(apiKeys)
    .set({ name })
    .where(and(eq(apiKeys.id, keyId), inArray(apiKeys.accountId, await accountsOfOwner(q, accountId))))
    .returning();
  return row && keySummary(row);
}

/** Revoke a key of the account; false when there is no such live key. */
export async function revokeApiKey(q: Queryable, accountId: string, keyId: string): Promise<boolean> {
  const rows = await q
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(apiKeys.id, keyId),
        inArray(apiKeys.accountId, await accountsOfOwner(q, accountId)),
        isNull(apiKeys.revokedAt),
      ),
    )
    .returning({ id: apiKeys.id });
  return rows.length > 0;
}

/** `last_used_at` is refreshed at most this often, so reads don't each cost a write. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** The account a live key belongs to, or undefined for an unknown or revoked key. */
export async function accountForKey(
  q: Queryable,
  key: string,
): Promise<{ accountId: string; keyId: string } | undefined> {
  if (!API_KEY_PATTERN.test(key)) return undefined;
  const [row] = await q
    .select({ accountId: apiKeys.accountId, keyId: apiKeys.id, lastUsedAt: apiKeys.lastUsedAt })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, hashApiKey(key)), isNull(apiKeys.revokedAt)));
  if (!row) return undefined;
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await q.update(apiKeys).set({ lastUsedAt: new Date() }).where(eq(apiKeys.id, row.keyId));
  }
  return { accountId: row.accountId, keyId: row.keyId };
}
