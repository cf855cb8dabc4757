// Sends the outbox: every API process claims due deliveries (a lease, so replicas never send
// one twice at once and a dead process's claims are taken over), signs each with its endpoint's
// secret (Standard Webhooks), posts it, and records the answer: delivered on a 2xx, else tried
// again on WEBHOOKS_RETRY_SECONDS' schedule and marked failed after the last.

import { and, asc, eq, inArray, isNull, lt, lte, or, sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import packageJson from '../../package.json' with { type: 'json' };
import type { WebhookSettings } from '../config.ts';
import { daysAgo, secondsFromNow } from '../db/clock.ts';
import type { Database } from '../db/index.ts';
import { log } from '../logging/index.ts';
import { webhookAttempts } from '../metrics/index.ts';
import { DestinationRefused, type Resolver, systemResolver } from './destinations.ts';
import { onEventsWritten } from './outbox.ts';
import { pinnedFetch } from './pinned-fetch.ts';
import { type DeliveryAttempt, webhookDeliveries, webhookEndpoints } from './schema.ts';

type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** Deliveries one process claims at a time. */
const BATCH = 20;
/** Attempts kept on a delivery's record. */
const ATTEMPTS_KEPT = 10;
/** How often old deliveries are deleted. */
const PRUNE_EVERY_MS = 3_600_000;
/** When to look after this process wrote events (ms). */
const NUDGE_AFTER_MS = [20, 250];
/** A receiver's answer is read this far (for the log), the rest never downloaded. */
const ANSWER_BYTES_READ = 1024;
/** What of it is kept on the attempt. */
const ERROR_BODY_CHARS = 200;

export interface SenderDeps {
  db: Database;
  settings: WebhookSettings;
  resolve?: Resolver;
  /** Certificates trusted instead of the public CAs, for tests whose receiver has one of its own. */
  ca?: string;
}

export class WebhookSender {
  #timer: ReturnType<typeof setInterval> | undefined;
  #pruneTimer: ReturnType<typeof setInterval> | undefined;
  #unsubscribe: (() => void) | undefined;
  #running: Promise<void> | undefined;
  #again = false;

  constructor(private readonly deps: SenderDeps) {}

  start(): void {
    this.#timer = setInterval(() => this.#kick(), this.deps.settings.pollMs);
    this.#pruneTimer = setInterval(
      () => void this.prune().catch((error) => log.error({ err: error }, 'pruning old webhook deliveries failed')),
      PRUNE_EVERY_MS,
    );
    // An event this process wrote goes at once: it is written inside a transaction that
    // commits moments later, so look just after, and once more in case that took longer.
    this.#unsubscribe = onEventsWritten(() => {
      for (const ms of NUDGE_AFTER_MS) setTimeout(() => this.#kick(), ms);
    });
  }

  /** Stops polling and waits for the attempts under way. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    clearInterval(this.#pruneTimer);
    this.#unsubscribe?.();
    this.#timer = undefined;
    await this.#running;
  }

  #kick(): void {
    // Stopped: a nudge timer still pending must not start a round (the database may be closing).
    if (!this.#timer) return;
    if (this.#running !== undefined) {
      this.#again = true;
      return;
    }
    this.#running = this.sendDue()
      .then(() => undefined)
      .catch((error) => log.error({ err: error }, 'sending webhooks failed'))
      .finally(() => {
        this.#running = undefined;
        if (this.#again && this.#timer) {
          this.#again = false;
          this.#kick();
        }
      });
  }

  /** Deletes settled deliveries older than the retention; returns how many. Pending ones stay, whatever their age. */
  async prune(): Promise<number> {
    const deleted = await this.deps.db
      .delete(webhookDeliveries)
      .where(
        and(
          inArray(webhookDeliveries.status, ['delivered', 'failed']),
          lt(webhookDeliveries.createdAt, daysAgo(this.deps.settings.retentionDays)),
        ),
      )
      .returning({ id: webhookDeliveries.id });
    return deleted.length;
  }

  /** Sends every delivery due now; returns how many were attempted. */
  async sendDue(): Promise<number> {
    let attempted = 0;
    for (;;) {
      const claimed = await this.#claim();
      if (claimed.length === 0) return attempted;
      await Promise.all(claimed.map((delivery) => this.#attempt(delivery)));
      attempted += claimed.length;
    }
  }

  async #claim(): Promise<DeliveryRow[]> {
    const { db, settings } = this.deps;
    const due = db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.status, 'pending'),
          lte(webhookDeliveries.nextAttemptAt, sql`now()`),
          or(isNull(webhookDeliveries.lockedUntil), lt(webhookDeliveries.lockedUntil, sql`now()`)),
        ),
      )
      .orderBy(asc(webhookDeliveries.nextAttemptAt))
      .limit(BATCH)
      .for('update', { skipLocked: true });
    // Held for longer than an attempt can take; released when its outcome is recorded.
    const leaseSeconds = settings.timeoutSeconds * 3;
    return db
      .update(webhookDeliveries)
      .set({ lockedUntil: secondsFromNow(leaseSeconds) })
      .where(inArray(webhookDeliveries.id, due))
      .returning();
  }

  async #attempt(delivery: DeliveryRow): Promise<void> {
    const { db, settings } = this.deps;
    const [endpoint] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, delivery.endpointId));
    if (!endpoint) return; // deleted meanwhile: its deliveries went with it
    const startedAt = new Date();
    let statusCode: number | null = null;
    let error: string | null = null;
    if (!endpoint.enabled) error = 'the endpoint is disabled';
    else {
      try {
        const response = await this.#post(endpoint.url, endpoint.secret, delivery, startedAt);
        statusCode = response.status;
        if (!response.ok) error = `answered ${response.status}${response.body ? `: ${response.body}` : ''}`;
      } catch (failure) {
        error =
          failure instanceof DestinationRefused
            ? `refused: ${failure.message}`
            : describeFailure(failure, settings.timeoutSeconds);
      }
    }
    const attempt: DeliveryAttempt = {
      at: startedAt.toISOString(),
      status_code: statusCode,
      error,
      duration_ms: Date.now() - startedAt.getTime(),
    };
    const attempts = delivery.attempts + 1;
    const attemptLog = [...delivery.attemptLog, attempt].slice(-ATTEMPTS_KEPT);
    const delivered = error === null;
    // A disabled endpoint is not retried: it asked for nothing.
    const exhausted = !delivered && (attempts > settings.retrySeconds.length || !endpoint.enabled);
    const retryIn = settings.retrySeconds[attempts - 1] ?? 0;
    await db
      .update(webhookDeliveries)
      .set({
        status: delivered ? 'delivered' : exhausted ? 'failed' : 'pending',
        attempts,
        attemptLog,
        lastStatusCode: statusCode,
        lastError: error,
        lockedUntil: null,
        deliveredAt: delivered ? new Date() : null,
        ...(delivered || exhausted ? {} : { nextAttemptAt: secondsFromNow(retryIn) }),
      })
      .where(eq(webhookDeliveries.id, delivery.id));
    const fields = {
      delivery_id: delivery.id,
      message_id: delivery.messageId,
      webhook_id: endpoint.id,
      account_id: delivery.accountId,
      event: delivery.eventType,
      attempt: attempts,
    };
    webhookAttempts.inc({ outcome: delivered ? 'delivered' : exhausted ? 'failed' : 'retrying' });
    if (delivered) log.info({ ...fields, status: statusCode }, 'webhook delivered');
    else if (exhausted) log.warn({ ...fields, error }, 'webhook failed for good');
    else log.info({ ...fields, error, retry_in_seconds: retryIn }, 'webhook not delivered, retrying');
  }

  /** One signed POST to the address the endpoint's host resolves to now, if that may be called (pinned-fetch.ts). */
  async #post(
    url: string,
    secret: string,
    delivery: DeliveryRow,
    at: Date,
  ): Promise<{ status: number; ok: boolean; body: string }> {
    const { settings, resolve, ca } = this.deps;
    const answer = await pinnedFetch(url, {
      method: 'POST',
      timeoutMs: settings.timeoutSeconds * 1000,
      allowPrivate: settings.allowPrivate,
      resolve: resolve ?? systemResolver,
      maxAnswerBytes: ANSWER_BYTES_READ,
      skipOkBody: true,
      ca,
      headers: {
        'content-type': 'application/json',
        'user-agent': `Likeness-Webhooks/${packageJson.version}`,
        'webhook-id': delivery.messageId,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(delivery.messageId, at, delivery.payload),
      },
      body: delivery.payload,
    });
    // U+0000 cannot be stored by Postgres: the attempt would go unrecorded.
    const excerpt = answer.body.slice(0, ERROR_BODY_CHARS).replaceAll('\u0000', '\uFFFD');
    return { status: answer.status, ok: answer.ok, body: answer.ok ? '' : excerpt };
  }
}

function describeFailure(error: unknown, timeoutSeconds: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer within ${timeoutSeconds} s`;
  return `could not connect: ${error instanceof Error ? error.message : String(error)}`;
}
