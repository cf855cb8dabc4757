// A console sign-in is a browser session: a random token in an httpOnly cookie (only its
// SHA-256 is stored) and a CSRF token the page sends back on every change. The cookie is
// SameSite=Strict, so another site's form cannot carry it; the header is the second lock.
import { timingSafeEqual } from 'node:crypto';
import { and, eq, gt, lt } from 'drizzle-orm';
import { sha256Hex } from '../contract/index.ts';
import { newId, randomBase62 } from '../db/ids.ts';
import type { Database } from '../db/index.ts';
import { consoleSessions } from './schema.ts';

export const CONSOLE_COOKIE = 'likeness_console';
export const CSRF_HEADER = 'x-csrf-token';

export interface BrowserSession {
  sessionId: string;
  accountId: string;
  csrfToken: string;
  expiresAt: Date;
}

/** Opens a session for the account; the token goes into the cookie and nowhere else. */
export async function openBrowserSession(
  db: Database,
  accountId: string,
  hours: number,
): Promise<BrowserSession & { token: string }> {
  const token = randomBase62(43);
  const session = {
    sessionId: newId('cs'),
    accountId,
    csrfToken: randomBase62(32),
    expiresAt: new Date(Date.now() + hours * 3_600_000),
  };
  // Expired sessions of this account go as a new one opens: the table stays small without a sweeper.
  await db
    .delete(consoleSessions)
    .where(and(eq(consoleSessions.accountId, accountId), lt(consoleSessions.expiresAt, new Date())));
  await db.insert(consoleSessions).values({
    id: session.sessionId,
    accountId,
    tokenHash: sha256Hex(token),
    csrfToken: session.csrfToken,
    expiresAt: session.expiresAt,
  });
  return { ...session, token };
}

/** The live session a cookie token belongs to. */
export async function findBrowserSession(db: Database, token: string): Promise<BrowserSession | undefined> {
  if (!/^[0-9A-Za-z]{43}$/.test(token)) return undefined;
  const [row] = await db
    .select()
    .from(consoleSessions)
    .where(and(eq(consoleSessions.tokenHash, sha256Hex(token)), gt(consoleSessions.expiresAt, new Date())));
  return row && { sessionId: row.id, accountId: row.accountId, csrfToken: row.csrfToken, expiresAt: row.expiresAt };
}

export async function closeBrowserSession(db: Database, sessionId: string): Promise<void> {
  await db.delete(consoleSessions).where(eq(consoleSessions.id, sessionId));
}

/** The cookie's token from a request, if any. */
export function cookieToken(request: Request): string | undefined {
  const header = request.headers.get('cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === CONSOLE_COOKIE) return value.join('=');
  }
  return undefined;
}

/**
 * `Secure` unless the request came over plain HTTP to a host other than this machine: browsers
 * keep Secure cookies from http://localhost and 127.0.0.1, and a console behind TLS (directly
 * or through a proxy that sets X-Forwarded-Proto) must never send its cookie in the clear.
 */
function secureCookie(request: Request): boolean {
  const url = new URL(request.url);
  if (url.protocol === 'https:' || request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim() === 'https')
    return true;
  return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

export function sessionCookie(request: Request, token: string, expiresAt: Date): string {
  const attributes = [
    `${CONSOLE_COOKIE}=${token}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    `Expires=${expiresAt.toUTCString()}`,
  ];
  if (secureCookie(request)) attributes.push('Secure');
  return attributes.join('; ');
}

export function clearedCookie(request: Request): string {
  const attributes = [`${CONSOLE_COOKIE}=`, 'Path=/', 'HttpOnly', 'SameSite=Strict', 'Max-Age=0'];
  if (secureCookie(request)) attributes.push('Secure');
  return attributes.join('; ');
}

/** Constant-time comparison of the CSRF header with the session's token. */
export function csrfMatches(session: BrowserSession, presented: string | null): boolean {
  if (!presented) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}
