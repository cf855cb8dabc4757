// The embed (docs/api.md#embed-start): a website's page starts a session with a publishable
// key at POST /v1/embed/sessions, answered with CORS for the page's origin, and gets the room
// to join; /embed.js and the iframe page (pages.ts) are the front end that does it. Every check
// a secret key's start makes applies (src/sessions/start.ts), and the key's own: its origins,
// its identities, its limits per key and per visitor address.

import { eq } from 'drizzle-orm';
import { Elysia } from 'elysia';
import { isTestAccount } from '../accounts/index.ts';
import { presentedKey } from '../auth/index.ts';
import { sha256Hex } from '../contract/index.ts';
import type { Database } from '../db/index.ts';
import { ownedRow } from '../db/owned.ts';
import { CallerAddress } from '../http/caller-address.ts';
import { ApiError, errorResponses, invalid } from '../http/errors.ts';
import {
  EmbedStartRequest,
  EmbedStartResponse,
  exactOrigin,
  findPublishableKey,
  type PublishableKeyRow,
} from '../publishable-keys/index.ts';
import { publishableKeys } from '../publishable-keys/schema.ts';
import type { SessionDeps } from '../sessions/index.ts';
import { startSession } from '../sessions/index.ts';
import { sessions } from '../sessions/schema.ts';
import type { VisitorClaim, VisitorTokens } from '../visitors/index.ts';
import { embedPageRoutes } from './pages.ts';

export const EMBED_START_PATH = '/v1/embed/sessions';
/** Sent by the iframe page (its own origin is this service's): the origin of the page that frames it. */
export const EMBEDDER_HEADER = 'x-likeness-embedder';

export interface EmbedDeps {
  sessionDeps: SessionDeps;
  /** TRUSTED_PROXIES: whose X-Forwarded-For names the visitor. */
  trustedProxies: readonly string[];
  /** LIMIT_IPV6_PREFIX: an IPv6 visitor's limits count by their network of this many bits. */
  limitIpv6Prefix: number;
  /** Checks the visitor token a page may send (src/visitors/tokens.ts). */
  visitorTokens: VisitorTokens;
}

/** The visitor a page's `visitor_token` names for this key's account, or a 422 saying why not. */
async function tokenVisitor(tokens: VisitorTokens, token: string, accountId: string): Promise<VisitorClaim> {
  const check = await tokens.check(token, accountId);
  if (check.ok) return check.claim;
  const why = {
    expired: 'has expired: ask your backend for a new one (POST /v1/visitor-tokens) when the page loads',
    invalid: 'is not a visitor token of this service',
    other_account: "was made for another account than this publishable key's",
  }[check.problem];
  throw invalid(['body', 'visitor_token'], `visitor_token ${why}`, `visitor_token_${check.problem}`);
}

/** `last_used_at` is refreshed at most this often. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Whether `origin` is this service's own: the request comes from the iframe page served here. */
function isOwnOrigin(origin: string, request: Request): boolean {
  try {
    return new URL(origin).host === (request.headers.get('host') ?? new URL(request.url).host);
  } catch {
    return false;
  }
}

/**
 * The origin of the page that asks: the browser's Origin, or for the iframe page (served from
 * here, framed only by the key's origins: frame-ancestors) the embedder it names. A request
 * without Origin is no browser page's: 403.
 */
function pageOrigin(request: Request): string {
  const origin = request.headers.get('origin');
  if (origin === null)
    throw new ApiError(
      403,
      'A publishable key starts sessions from web pages, and this request names none (no Origin header): from a server, use a secret key and POST /v1/sessions/start',
    );
  if (!isOwnOrigin(origin, request)) return origin;
  const embedder = request.headers.get(EMBEDDER_HEADER);
  const named = embedder === null ? undefined : exactOrigin(embedder);
  if (!named) throw new ApiError(403, "The embed page must be framed by a page of one of the key's allowed_origins");
  return named;
}

function checkKey(key: PublishableKeyRow, origin: string, identityId: string): void {
  if (!key.allowedOrigins.includes(origin))
    throw new ApiError(
      403,
      `This page's origin (${origin.slice(0, 200)}) may not use this key: add it to the key's allowed_origins`,
    );
  if (!key.identityIds.includes(identityId))
    throw new ApiError(
      403,
      `This key may not start identity ${identityId.slice(0, 100)}: add it to the key's identity_ids`,
    );
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route table: Elysia infers each route's types along one chain, so a feature's routes stay one expression
export function embedRoutes(deps: EmbedDeps) {
  const { db } = deps.sessionDeps;
  const visitors = new CallerAddress(deps.trustedProxies, deps.limitIpv6Prefix);
  return (
    new Elysia({ name: 'likeness/embed' })
      .use(embedPageRoutes({ allowedOrigins: async (key) => (await findPublishableKey(db, key))?.allowedOrigins }))
      // Preflight: the key is not sent with it, so any origin may ask; the POST decides.
      .options(
        EMBED_START_PATH,
        ({ request, set }) => {
          set.status = 204;
          set.headers['access-control-allow-origin'] = request.headers.get('origin') ?? '*';
          set.headers['access-control-allow-methods'] = 'POST';
          set.headers['access-control-allow-headers'] = `authorization, x-api-key, content-type, ${EMBEDDER_HEADER}`;
          set.headers['access-control-max-age'] = '600';
          set.headers.vary = 'Origin';
        },
        { detail: { hide: true } },
      )
      .post(
        EMBED_START_PATH,
        async ({ request, body, set, server }) => {
          const origin = request.headers.get('origin');
          // Refusals too are readable by the page, so it can say why.
          if (origin !== null) {
            set.headers['access-control-allow-origin'] = origin;
            set.headers.vary = 'Origin';
            // The element counts down a 429's wait; a page reads only headers it is allowed to.
            set.headers['access-control-expose-headers'] = 'retry-after';
          }
          const presented = presentedKey(request.headers);
          const key = presented === undefined ? undefined : await findPublishableKey(db, presented);
          if (!key) throw new ApiError(401, 'Missing, unknown or revoked publishable key (lk_pub_…)');
          checkKey(key, pageOrigin(request), body.identity_id);
          await touch(db, key);
          // Checked before anything is counted: a refused token starts nothing.
          const named = body.visitor_token
            ? await tokenVisitor(deps.visitorTokens, body.visitor_token, key.accountId)
            : undefined;
          const visitor = visitors.limitKey(request, server?.requestIP(request)?.address);
          const started = await startSession(
            deps.sessionDeps,
            key.accountId,
            {
              identity_id: body.identity_id,
              form_factor: body.form_factor,
              language: body.language,
              visitor_id: named?.visitorId,
              memory_scope: named?.memoryScope,
            },
            deps.sessionDeps.urlsFor(request).rtcUrl,
            {
              publishableKeyId: key.id,
              limits: key.limits,
              recordSessions: key.recordSessions,
              visitorAddressHash: sha256Hex(visitor),
            },
          );
          const session = await ownedRow(db, sessions, key.accountId, started.room_name);
          return {
            session_id: started.room_name,
            room_name: started.room_name,
            token: started.token,
            rtc_url: started.rtc_url,
            visual_awareness: started.visual_awareness,
            max_duration_seconds: session!.maxDurationSeconds,
            test: isTestAccount(key.accountId),
            record: started.record,
          };
        },
        {
          body: EmbedStartRequest,
          parse: 'json',
          response: {
            200: EmbedStartResponse,
            ...errorResponses(401, 402, 403, 404, 409, 422, 429, 500, 503),
          },
          detail: {
            tags: ['Embed'],
            security: [{ bearer: [] }, { apiKey: [] }],
            operationId: 'startEmbedSession',
            summary: "Start a session from a website's page with a publishable key",
            description:
              "For browsers: the key (`lk_pub_…`) in `Authorization: Bearer` or `X-API-Key`, the page's `Origin` one of the key's `allowed_origins`, `identity_id` one of its `identity_ids`; the key's limits per key and per visitor address (an IPv6 visitor counted by their /64, `LIMIT_IPV6_PREFIX`) answer 429 with Retry-After. Answered with CORS for that origin, refusals included. The session is charged to the key's account and carries `publishable_key_id`; it ends when the visitor leaves or at its maximum length.",
          },
        },
      )
  );
}

async function touch(db: Database, key: PublishableKeyRow): Promise<void> {
  if (key.lastUsedAt && Date.now() - key.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
  await db.update(publishableKeys).set({ lastUsedAt: new Date() }).where(eq(publishableKeys.id, key.id));
}
