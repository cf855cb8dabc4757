// Who is calling (docs/api.md#authentication). /v1: a secret API key, `Authorization: Bearer <key>`
// or `X-API-Key: <key>`, from a server (a browser page of another origin is refused: the key
// would be in its code). /console/api: the console's sign-in cookie, plus the CSRF header on
// every change. Either way the caller is an account (a test key's: its test account); every
// query downstream is scoped by it. Publishable keys (`lk_pub_…`) open only their own door,
// src/embed/.
import { Elysia } from 'elysia';
import { isTestAccount } from '../accounts/index.ts';
import type { Database } from '../db/index.ts';
import { ApiError } from '../http/errors.ts';
import { accountForKey, PUBLISHABLE_KEY_PREFIX } from './api-keys.ts';
import { type BrowserSession, CSRF_HEADER, cookieToken, csrfMatches, findBrowserSession } from './browser-sessions.ts';
import { admitInternal, type InternalDoor } from './internal-doors.ts';

export {
  hashApiKey,
  issueApiKey,
  listApiKeys,
  PUBLISHABLE_KEY_PREFIX,
  renameApiKey,
  revokeApiKey,
  TEST_KEY_PREFIX,
} from './api-keys.ts';
export {
  clearedCookie,
  closeBrowserSession,
  cookieToken,
  findBrowserSession,
  openBrowserSession,
  sessionCookie,
} from './browser-sessions.ts';
export { bearerToken, type InternalDoor } from './internal-doors.ts';
export { jobReportDoor, jobSession } from './job-tokens.ts';

export interface Caller {
  accountId: string;
  /** The API key used; undefined for a console sign-in. */
  keyId?: string;
  /** The console sign-in used; undefined for an API key. */
  browserSession?: BrowserSession;
  /** A test key's call: the account is a test account (docs/api.md#test-mode). */
  test: boolean;
}

/** Which door a group of routes is behind: the public API, or the console's own API. */
export interface Audience<Prefix extends string = string> {
  kind: 'api' | 'console';
  /** Where the routes are mounted: `/v1` or `/console/api`. */
  prefix: Prefix;
}

export const PUBLIC_API: Audience<'/v1'> = { kind: 'api', prefix: '/v1' };
export const CONSOLE_API: Audience<'/console/api'> = { kind: 'console', prefix: '/console/api' };

export function presentedKey(headers: Headers): string | undefined {
  const authorization = headers.get('authorization');
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1] ?? '';
  }
  return headers.get('x-api-key')?.trim() ?? undefined;
}

const READ_ONLY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

async function apiKeyCaller(db: Database, request: Request): Promise<Caller> {
  const key = presentedKey(request.headers);
  if (key === undefined) throw new ApiError(401, 'Missing API key: send Authorization: Bearer <key> or X-API-Key');
  if (key.startsWith(PUBLISHABLE_KEY_PREFIX)) {
    throw new ApiError(
      403,
      'A publishable key (lk_pub_…) can only start sessions, at POST /v1/embed/sessions; it reads nothing. Call this route from your server with a secret key',
    );
  }
  const origin = foreignOrigin(request);
  if (origin !== undefined) {
    throw new ApiError(
      403,
      `A secret API key was sent from a web page (${origin}): anyone who opens the page can read it and spend your credits. Keep secret keys on your server, or start sessions from the page with a publishable key (lk_pub_…) at POST /v1/embed/sessions`,
    );
  }
  const found = await accountForKey(db, key);
  if (!found) throw new ApiError(401, 'Invalid or revoked API key');
  return { ...found, test: isTestAccount(found.accountId) };
}

/**
 * The Origin of a browser page on another site than this service, or undefined (no Origin: a
 * server's call; the service's own origin: its API reference's "try it"). Browsers send Origin
 * on every cross-origin request, and page scripts cannot remove it.
 */
function foreignOrigin(request: Request): string | undefined {
  const origin = request.headers.get('origin');
  if (origin === null) return undefined;
  const host = request.headers.get('host') ?? new URL(request.url).host;
  try {
    return new URL(origin).host === host ? undefined : origin;
  } catch {
    return origin; // "null" (a sandboxed frame, a file): not this service's page either
  }
}

async function consoleCaller(db: Database, request: Request): Promise<Caller> {
  const token = cookieToken(request);
  const session = token ? await findBrowserSession(db, token) : undefined;
  if (!session) throw new ApiError(401, 'Not signed in to the console');
  if (!READ_ONLY_METHODS.has(request.method) && !csrfMatches(session, request.headers.get(CSRF_HEADER))) {
    throw new ApiError(403, 'Missing or wrong X-CSRF-Token header');
  }
  return { accountId: session.accountId, browserSession: session, test: false };
}

const callerFor = (db: Database, audience: Audience, request: Request) =>
  audience.kind === 'console' ? consoleCaller(db, request) : apiKeyCaller(db, request);

/** Callers found before their request's body was read (credentialsBeforeBodies), for the routes' own check, and for the access log. */
const knownCallers = new WeakMap<Request, Caller>();

/** The account a request was authenticated as, once it was (the access log's `account_id`). */
export function accountOf(request: Request): string | undefined {
  return knownCallers.get(request)?.accountId;
}

export function authentication(db: Database, audience: Audience = PUBLIC_API) {
  // The seed keeps Elysia from deduplicating the two doors into one.
  return new Elysia({ name: 'likeness/auth', seed: audience.kind }).derive(
    { as: 'scoped' },
    async ({ request }): Promise<{ caller: Caller }> => {
      const caller = knownCallers.get(request) ?? (await callerFor(db, audience, request));
      knownCallers.set(request, caller);
      return { caller };
    },
  );
}

/** Whether a request carries a body (a length above 0, or a chunked one). */
function hasBody(request: Request): boolean {
  if (READ_ONLY_METHODS.has(request.method)) return false;
  return Number(request.headers.get('content-length') ?? 0) > 0 || request.headers.has('transfer-encoding');
}

/**
 * Credentials before bodies: a request with a body to either door's routes, or to an internal
 * route, is answered 401 (or the console's 403) before its body is read when its credentials
 * do not hold, so an anonymous client cannot make the service buffer and parse uploads of tens
 * of megabytes. Runs before routing (Elysia's parse step would read the body first); `open`
 * are the paths that take no credentials (the console's sign-in and sign-up), whose bodies
 * are bounded instead; `internal` the internal routes' doors (internal-doors.ts).
 */
export function credentialsBeforeBodies(db: Database, open: readonly string[], internal: readonly InternalDoor[]) {
  return new Elysia({ name: 'likeness/credentials-before-bodies' }).onRequest(async ({ request }) => {
    if (!hasBody(request)) return;
    const path = new URL(request.url).pathname;
    if (path.startsWith('/internal/')) return admitInternal(internal, request, path);
    if (open.includes(path)) return boundOpenBody(request);
    const audience = path.startsWith(`${PUBLIC_API.prefix}/`)
      ? PUBLIC_API
      : path.startsWith(`${CONSOLE_API.prefix}/`)
        ? CONSOLE_API
        : undefined;
    if (audience) knownCallers.set(request, await callerFor(db, audience, request));
  });
}

/** An email and a password, with room to spare: what a route open to anyone reads at most. */
const OPEN_BODY_BYTES = 16 * 1024;

function boundOpenBody(request: Request): void {
  const length = request.headers.get('content-length');
  if (length === null) throw new ApiError(411, 'This route needs a Content-Length');
  if (Number(length) > OPEN_BODY_BYTES)
    throw new ApiError(413, `Request body too large: at most ${OPEN_BODY_BYTES} bytes`);
}

/**
 * A group of authenticated routes at `<audience prefix><path>`. The public API's appear in the
 * OpenAPI document under `tag`; the console's twins are hidden from it.
 */
export function authenticatedRoutes<const Prefix extends string, const Path extends string>(
  db: Database,
  audience: Audience<Prefix>,
  path: Path,
  tag: string,
) {
  const security: Record<string, string[]>[] = [{ bearer: [] }, { apiKey: [] }];
  const detail = audience.kind === 'api' ? { tags: [tag], security } : { hide: true };
  // The prefix's type is the literal path: the app's type then names every route.
  const prefix = `${audience.prefix}${path}` as `${Prefix}${Path}`;
  return new Elysia({ prefix, detail }).use(authentication(db, audience));
}
