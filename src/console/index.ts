// The console (issue: "Console and browser client"): sign-up and sign-in with a password, the
// account's keys, and the pages that use them. Its identity, voice, pipeline, session and
// credit routes are the public API's own, mounted at /console/api behind the sign-in cookie
// (server.ts), so the browser never holds an API key.

import { eq } from 'drizzle-orm';
import { Elysia, t } from 'elysia';
import { normalisedEmail } from '../accounts/index.ts';
import { accounts } from '../accounts/schema.ts';
import {
  authentication,
  CONSOLE_API,
  clearedCookie,
  closeBrowserSession,
  cookieToken,
  findBrowserSession,
  issueApiKey,
  listApiKeys,
  openBrowserSession,
  renameApiKey,
  revokeApiKey,
  sessionCookie,
} from '../auth/index.ts';
import type { ConsoleSettings } from '../config.ts';
import type { Database } from '../db/index.ts';
import { CallerAddress } from '../http/caller-address.ts';
import { ApiError, errorResponses, invalid, notFound } from '../http/errors.ts';
import { AttemptLimiter, SignInThrottle } from '../limits/index.ts';
import { AccountExists, createAccount } from '../new-accounts/index.ts';
import {
  ChangePasswordBody,
  CreateKeyBody,
  IssuedKeyResponse,
  KeyParams,
  KeySummary,
  RenameKeyBody,
  SignedIn,
  SignedUp,
  SignInBody,
  SignInState,
  SignUpBody,
} from './contract.ts';
import { frontEndRoutes } from './front-end.ts';
import { hashPassword, setConsolePassword } from './passwords.ts';
import { consoleLogins } from './schema.ts';

export { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, setConsolePassword } from './passwords.ts';
export type { SessionNotice, TalkRoom, TranscriptSegment } from './web/room.ts';

/** The console's routes that take no credentials: everything else under its prefix needs a sign-in. */
export const CONSOLE_OPEN_PATHS = [`${CONSOLE_API.prefix}/sign-up`, `${CONSOLE_API.prefix}/sign-in`] as const;

/** The sign-up route's answer with SIGNUP=off (403): accounts are the operator's to make. */
export const SIGN_UP_OFF = 'Sign-up is turned off on this service: ask its operator for an account';

/**
 * Refuses a sign-up or sign-in another site's page could have sent: a body that is not JSON
 * (415), a browser's `Sec-Fetch-Site` other than same-origin, or an `Origin` other than the
 * console's (403). Clients that send neither (curl, scripts) are not browsers being misled.
 */
function ownPagesOnly(request: Request, origin: string): void {
  if (!(request.headers.get('content-type') ?? '').toLowerCase().startsWith('application/json')) {
    throw new ApiError(415, 'Send the credentials as application/json');
  }
  const site = request.headers.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none')
    throw new ApiError(403, 'Sign-in and sign-up are accepted from the console’s own pages only');
  const from = request.headers.get('origin');
  if (from && from !== origin && from !== new URL(request.url).origin)
    throw new ApiError(403, 'Sign-in and sign-up are accepted from the console’s own pages only');
}

export interface ConsoleDeps {
  db: Database;
  settings: ConsoleSettings;
}

/**
 * Verifying a password for an unknown email still costs a hash, so timing tells nothing.
 * Made on the first sign-in, not when the module loads (every process start would pay it).
 */
let unknownAccountHash: Promise<string> | undefined;
const hashForUnknownAccount = () => (unknownAccountHash ??= hashPassword('no account has this password'));

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route table: Elysia infers each route's types along one chain, so a feature's routes stay one expression
export function consoleRoutes(deps: ConsoleDeps) {
  const { db, settings } = deps;
  const failedSignIns = new SignInThrottle(db, {
    failuresAllowed: settings.signInFailuresAllowed,
    windowSeconds: settings.signInWindowSeconds,
  });
  // Every account starts with credits: new accounts per address are limited too.
  const signUps = new AttemptLimiter(db, {
    scope: 'sign-up-address',
    allowed: settings.signUpsPerHour,
    windowSeconds: 3600,
  });
  const clients = new CallerAddress(settings.trustedProxies, settings.limitIpv6Prefix);
  const tooMany = (set: { headers: Record<string, string | number> }, wait: number, what: string) => {
    set.headers['retry-after'] = String(wait);
    return new ApiError(429, `${what}: try again in ${wait} s`);
  };
  const accountView = async (accountId: string) => {
    const [row] = await db.select().from(accounts).where(eq(accounts.id, accountId));
    // A test account has no email and no sign-in (src/accounts/test-mode.ts).
    if (!row?.email) throw new ApiError(401, 'Not signed in to the console');
    return { account_id: row.id, email: row.email, balance: row.balance };
  };
  const signedInAs = async (request: Request, set: { headers: Record<string, string | number> }, accountId: string) => {
    const session = await openBrowserSession(db, accountId, settings.sessionHours);
    set.headers['set-cookie'] = sessionCookie(request, session.token, session.expiresAt);
    return { account: await accountView(accountId), csrf_token: session.csrfToken };
  };
  const noStore = (set: { headers: Record<string, string | number> }) => {
    // Answers carrying a key or a CSRF token must not sit in any cache.
    set.headers['cache-control'] = 'no-store';
  };

  const accountRoutes = new Elysia({ prefix: CONSOLE_API.prefix, detail: { hide: true } })
    // Sign-up and sign-in take no cookie, so no CSRF token guards them: only JSON from the
    // console's own pages (a cross-site form can send text/plain, never application/json).
    .onBeforeHandle(({ request }) => ownPagesOnly(request, settings.origin))
    .post(
      '/sign-up',
      async ({ body, request, set, server }) => {
        noStore(set);
        // Counted before anything else, atomically: of parallel sign-ups only as many as allowed
        // go on; one for an email that has an account counts too (probing for accounts).
        const taken = await signUps.take(clients.limitKey(request, server?.requestIP(request)?.address));
        if ('wait' in taken) throw tooMany(set, taken.wait, 'Too many new accounts from this address');
        const passwordHash = await hashPassword(body.password);
        let created: Awaited<ReturnType<typeof createAccount>>;
        try {
          created = await createAccount(
            db,
            { email: body.email, credits: settings.starterCredits, keyName: 'console' },
            async (tx, accountId) => {
              await tx.insert(consoleLogins).values({ accountId, passwordHash });
            },
          );
        } catch (error) {
          if (error instanceof AccountExists)
            throw new ApiError(409, 'An account with this email already exists: sign in instead');
          throw error;
        }
        set.status = 201;
        return {
          ...(await signedInAs(request, set, created.account_id)),
          api_key: { key_id: created.key_id, api_key: created.api_key, name: 'console', test: false },
        };
      },
      {
        // Before the body is validated: with sign-up off, every sign-up gets the same answer.
        transform: () => {
          if (!settings.signUp) throw new ApiError(403, SIGN_UP_OFF);
        },
        body: SignUpBody,
        parse: 'json',
        response: {
          201: SignedUp,
          ...errorResponses(403, 409, 422, 429),
        },
      },
    )
    .post(
      '/sign-in',
      async ({ body, request, set, server }) => {
        noStore(set);
        const email = normalisedEmail(body.email);
        // An attempt is taken before the password is checked (parallel guesses cannot all pass)
        // and given back when it is right.
        const attempt = await failedSignIns.take(email, clients.limitKey(request, server?.requestIP(request)?.address));
        if ('wait' in attempt) throw tooMany(set, attempt.wait, 'Too many failed sign-ins');
        const [login] = await db
          .select({ accountId: consoleLogins.accountId, passwordHash: consoleLogins.passwordHash })
          .from(consoleLogins)
          .innerJoin(accounts, eq(accounts.id, consoleLogins.accountId))
          .where(eq(accounts.email, email));
        const matches = await Bun.password.verify(
          body.password,
          login?.passwordHash ?? (await hashForUnknownAccount()),
        );
        if (!login || !matches) throw new ApiError(401, 'Wrong email or password');
        await attempt.release();
        return signedInAs(request, set, login.accountId);
      },
      {
        body: SignInBody,
        parse: 'json',
        response: { 200: SignedIn, ...errorResponses(401, 422, 429) },
      },
    );

  // The page asks as it opens (and learns whether to offer sign-up). 200 either way: browsers
  // log every 401 in their console, and a visitor who has not signed in yet did nothing wrong.
  const signInStateRoute = new Elysia({ prefix: CONSOLE_API.prefix, detail: { hide: true } }).get(
    '/signed-in',
    async ({ request, set }) => {
      noStore(set);
      const token = cookieToken(request);
      const session = token ? await findBrowserSession(db, token) : undefined;
      // An account deleted under a live cookie counts as signed out.
      const account = session
        ? await accountView(session.accountId).catch((error: unknown) =>
            error instanceof ApiError && error.status === 401 ? undefined : Promise.reject(error),
          )
        : undefined;
      const signUp = settings.signUp;
      return session && account
        ? { signed_in: true, sign_up: signUp, account, csrf_token: session.csrfToken }
        : { signed_in: false, sign_up: signUp };
    },
    { response: { 200: SignInState } },
  );

  const signedInRoutes = new Elysia({ prefix: CONSOLE_API.prefix, detail: { hide: true } })
    .use(authentication(db, CONSOLE_API))
    .post(
      '/sign-out',
      async ({ caller, request, set }) => {
        await closeBrowserSession(db, caller.browserSession!.sessionId);
        set.headers['set-cookie'] = clearedCookie(request);
        set.status = 204;
      },
      { response: { 204: t.Void(), ...errorResponses(401, 403) } },
    )
    .get(
      '/me',
      async ({ caller, set }) => {
        noStore(set);
        return { account: await accountView(caller.accountId), csrf_token: caller.browserSession!.csrfToken };
      },
      { response: { 200: SignedIn, ...errorResponses(401) } },
    )
    .post(
      '/password',
      async ({ caller, body, request, set, server }) => {
        noStore(set);
        // Throttled like sign-in: a stolen cookie must not become a way to guess the password.
        const { email } = await accountView(caller.accountId);
        const attempt = await failedSignIns.take(email, clients.limitKey(request, server?.requestIP(request)?.address));
        if ('wait' in attempt) throw tooMany(set, attempt.wait, 'Too many failed sign-ins');
        const [login] = await db
          .select({ passwordHash: consoleLogins.passwordHash })
          .from(consoleLogins)
          .where(eq(consoleLogins.accountId, caller.accountId));
        if (!login || !(await Bun.password.verify(body.current_password, login.passwordHash))) {
          // 422 on the field, not 401: the browser is still signed in.
          throw invalid(['body', 'current_password'], 'The current password is wrong', 'wrong_password');
        }
        await attempt.release();
        // Every browser of the account is signed out (someone else may know the old password);
        // this one gets a new session at once.
        await setConsolePassword(db, caller.accountId, body.new_password);
        return signedInAs(request, set, caller.accountId);
      },
      {
        body: ChangePasswordBody,
        parse: 'json',
        response: {
          200: SignedIn,
          ...errorResponses(401, 403, 422, 429),
        },
      },
    )
    .get('/keys', ({ caller }) => listApiKeys(db, caller.accountId), {
      response: { 200: t.Array(KeySummary), ...errorResponses(401) },
    })
    .post(
      '/keys',
      async ({ caller, body, set }) => {
        noStore(set);
        const issued = await db.transaction((tx) => issueApiKey(tx, caller.accountId, body.name, { test: body.test }));
        set.status = 201;
        return { ...issued, name: body.name };
      },
      {
        body: CreateKeyBody,
        parse: 'json',
        response: { 201: IssuedKeyResponse, ...errorResponses(401, 403, 422) },
      },
    )
    .patch(
      '/keys/:key_id',
      async ({ caller, params, body }) => {
        const renamed = await renameApiKey(db, caller.accountId, params.key_id, body.name);
        if (!renamed) throw notFound('Key');
        return renamed;
      },
      {
        params: KeyParams,
        body: RenameKeyBody,
        parse: 'json',
        response: {
          200: KeySummary,
          ...errorResponses(401, 403, 404, 422),
        },
      },
    )
    .delete(
      '/keys/:key_id',
      async ({ caller, params, set }) => {
        if (!(await revokeApiKey(db, caller.accountId, params.key_id))) throw notFound('Live key');
        set.status = 204;
      },
      { params: KeyParams, response: { 204: t.Void(), ...errorResponses(401, 403, 404) } },
    );

  return new Elysia({ name: 'likeness/console' })
    .use(accountRoutes)
    .use(signInStateRoute)
    .use(signedInRoutes)
    .use(frontEndRoutes());
}
