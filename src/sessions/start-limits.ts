// A session start against the account's limits (src/limits): sessions running at once and
// starts per minute, counted from the account's session rows; a website's start also against
// its publishable key's, per key and per visitor address. Voice-only sessions count as
// any other: they take an agent worker's slot just the same (decisions.md). A test account's
// sessions count with its live account's, against the live account's limits (test-mode.ts).
import { and, count, desc, eq, gt, inArray, type SQL } from 'drizzle-orm';
import { ownerAccountIds } from '../accounts/index.ts';
import { secondsAgo } from '../db/clock.ts';
import type { Queryable } from '../db/index.ts';
import { type AccountLimits, limitReached, windowWait } from '../limits/index.ts';
import type { PublishableKeyLimits } from '../publishable-keys/schema.ts';
import { sessions } from './schema.ts';

/** What a 429 for running sessions tells a client to wait: sessions end at their own pace. */
const RUNNING_RETRY_AFTER_SECONDS = 15;

/** How many sessions of `scope` run now. */
async function runningIn(q: Queryable, scope: SQL | undefined): Promise<number> {
  const [row] = await q
    .select({ running: count() })
    .from(sessions)
    .where(and(scope, eq(sessions.status, 'running')));
  return row?.running ?? 0;
}

/** Seconds until `scope` may start another session, `allowed` a minute (0: now). */
async function minuteWait(q: Queryable, scope: SQL | undefined, allowed: number): Promise<number> {
  const recent = await q
    .select({ at: sessions.createdAt })
    .from(sessions)
    .where(and(scope, gt(sessions.createdAt, secondsAgo(60))))
    .orderBy(desc(sessions.createdAt))
    .limit(allowed);
  return windowWait(
    recent.map((r) => r.at),
    allowed,
    60,
  );
}

/** Throws 429 when the account may not start another session now. */
export async function checkSessionLimits(q: Queryable, accountId: string, limits: AccountLimits): Promise<void> {
  const ofOwner = inArray(sessions.accountId, ownerAccountIds(accountId));
  if (limits.concurrent_sessions > 0) {
    if ((await runningIn(q, ofOwner)) >= limits.concurrent_sessions) {
      throw limitReached(
        `This account has ${limits.concurrent_sessions} sessions running, its limit: end one first`,
        RUNNING_RETRY_AFTER_SECONDS,
      );
    }
  }
  const perMinute = limits.session_starts_per_minute;
  if (perMinute > 0) {
    const wait = await minuteWait(q, ofOwner, perMinute);
    if (wait > 0) throw limitReached(`This account started ${perMinute} sessions in the last minute, its limit`, wait);
  }
}

/** A start made with a publishable key (src/embed/): its own limits, per key and per visitor address. */
export interface PublishableStart {
  publishableKeyId: string;
  limits: PublishableKeyLimits;
  /** The key's choice for its sessions; null: each identity's `record_sessions`. */
  recordSessions: boolean | null;
  /** SHA-256 of the visitor's address. */
  visitorAddressHash: string;
}

/** Throws 429 when the publishable key, or this visitor with it, may not start another session now. */
export async function checkPublishableKeyLimits(q: Queryable, start: PublishableStart): Promise<void> {
  const { limits } = start;
  const ofKey = eq(sessions.publishableKeyId, start.publishableKeyId);
  const ofVisitor = and(ofKey, eq(sessions.visitorAddressHash, start.visitorAddressHash));
  if ((await runningIn(q, ofVisitor)) >= limits.visitor_concurrent_sessions)
    throw limitReached(
      `You have ${limits.visitor_concurrent_sessions} conversation${limits.visitor_concurrent_sessions === 1 ? '' : 's'} open with this site already: end one first`,
      RUNNING_RETRY_AFTER_SECONDS,
    );
  if ((await runningIn(q, ofKey)) >= limits.concurrent_sessions)
    throw limitReached(
      `This site's key has ${limits.concurrent_sessions} conversations running, its limit`,
      RUNNING_RETRY_AFTER_SECONDS,
    );
  let wait = await minuteWait(q, ofVisitor, limits.visitor_sessions_per_minute);
  if (wait > 0)
    throw limitReached(`You started ${limits.visitor_sessions_per_minute} conversations in the last minute`, wait);
  wait = await minuteWait(q, ofKey, limits.sessions_per_minute);
  if (wait > 0)
    throw limitReached(
      `This site's key started ${limits.sessions_per_minute} conversations in the last minute, its limit`,
      wait,
    );
}
