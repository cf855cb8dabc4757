// Publishable keys' format and look-up: `lk_pub_` (a test one `lk_pub_test_`) + 43 base62
// characters. Public by design, so stored as they are; what bounds one is its origins,
// identities and limits (docs/api.md#publishable-keys).
import { and, eq, isNull } from 'drizzle-orm';
import { isTestAccount } from '../accounts/index.ts';
import { PUBLISHABLE_KEY_PREFIX } from '../auth/index.ts';
import { randomBase62 } from '../db/ids.ts';
import type { Queryable } from '../db/index.ts';
import { publishableKeys } from './schema.ts';

const PUBLISHABLE_KEY_PATTERN = /^lk_pub_(test_)?[0-9A-Za-z]{43}$/;

export type PublishableKeyRow = typeof publishableKeys.$inferSelect;

/** A new key for this account: a test account's says so in its prefix, as test secret keys do. */
export function newPublishableKey(accountId: string): string {
  return `${PUBLISHABLE_KEY_PREFIX}${isTestAccount(accountId) ? 'test_' : ''}${randomBase62(43)}`;
}

/** The live (not revoked) key row for a presented key, or undefined. */
export async function findPublishableKey(q: Queryable, key: string): Promise<PublishableKeyRow | undefined> {
  if (!PUBLISHABLE_KEY_PATTERN.test(key)) return undefined;
  const [row] = await q
    .select()
    .from(publishableKeys)
    .where(and(eq(publishableKeys.key, key), isNull(publishableKeys.revokedAt)));
  return row;
}

/**
 * An origin as browsers send it (`https://shop.example`, `http://localhost:5173`), or
 * undefined when the text is not exactly one: a path, query, credentials or another scheme
 * would never match a browser's Origin header, so they are refused rather than kept.
 */
export function exactOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== ''))
    return undefined;
  if (!/^https?:\/\/[^/]+\/?$/i.test(text.trim())) return undefined;
  // A browser's Origin names one host: no wildcard or other odd character can match it.
  if (!/^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/i.test(url.hostname)) return undefined;
  return url.origin;
}
