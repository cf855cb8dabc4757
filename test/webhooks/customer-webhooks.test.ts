// Customer webhooks (issue 17, part 4; docs/api.md#webhooks) on both engines: endpoints as a
// customer manages them, every event a session and an identity cause arriving signed (checked
// with the standardwebhooks package, as a customer's receiver would), retries with the same
// `webhook-id` until a receiver takes it, and failure after the last retry.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Webhook } from 'standardwebhooks';
import { webhookAttempts } from '../../src/metrics/index.ts';
import { webhookDeliveries } from '../../src/webhooks/schema.ts';
import { createAstronaut, startSession } from '../avatar/support.ts';
import { ENGINES, startTestService, type TestService } from '../support/service.ts';
import {
  addWebhook,
  type Delivery,
  deliveriesOf,
  type Endpoint,
  json,
  latestDelivery,
  WebhookReceiver,
} from '../support/webhooks.ts';

const ALL_EVENTS = ['session.started', 'session.ended', 'identity.ready', 'identity.training_failed', 'credits.low'];

/** likeness_webhook_attempts_total by outcome, in this process. */
async function attemptCounts(): Promise<{ delivered: number; retrying: number; failed: number }> {
  const counts = { delivered: 0, retrying: 0, failed: 0 };
  for (const { labels, value } of (await webhookAttempts.get()).values)
    counts[labels.outcome as keyof typeof counts] = value;
  return counts;
}

describe.each(ENGINES)('customer webhooks on %s', (engine) => {
  let service: TestService;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = new WebhookReceiver();
    service = await startTestService(engine, {
      livekit: 'local',
      env: {
        // The receiver is on loopback.
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        WEBHOOKS_RETRY_SECONDS: '1,1,1',
        WEBHOOKS_POLL_MS: '100',
        CREDITS_ONBOARDING: '50',
        CREDITS_PER_AVATAR_MINUTE: '10',
      },
    });
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    receiver?.stop();
  });

  test('endpoints: the secret is shown once; list, read, change, delete; another account sees none of them', async () => {
    const account = await service.account();
    const other = await service.account();
    const created = await addWebhook(account, {
      url: receiver.url('/crud'),
      events: ['session.ended'],
      description: 'billing system',
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created).toMatchObject({
      url: receiver.url('/crud'),
      events: ['session.ended'],
      description: 'billing system',
      enabled: true,
    });

    const listed = (await (await account.call('GET', '/v1/webhooks')).json()) as { webhooks: Endpoint[] };
    expect(listed.webhooks.map((w) => w.webhook_id)).toEqual([created.webhook_id]);
    expect(listed.webhooks[0]).not.toHaveProperty('secret');
    const read = (await (await account.call('GET', `/v1/webhooks/${created.webhook_id}`)).json()) as Endpoint;
    expect(read).not.toHaveProperty('secret');
    expect(read.url).toBe(created.url);

    const changed = await account.call(
      'PATCH',
      `/v1/webhooks/${created.webhook_id}`,
      json({ events: ['session.started', 'credits.low'], enabled: false, description: null }),
    );
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({
      events: ['session.started', 'credits.low'],
      enabled: false,
      description: null,
    });

    // Another account's key finds nothing, changes nothing.
    expect(((await (await other.call('GET', '/v1/webhooks')).json()) as { webhooks: unknown[] }).webhooks).toEqual([]);
    for (const [method, path] of [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/test'],
      ['GET', '/deliveries'],
    ] as const) {
      const answer = await other.call(
        method,
        `/v1/webhooks/${created.webhook_id}${path}`,
        method === 'PATCH' ? json({ enabled: true }) : {},
      );
      expect(answer.status).toBe(404);
      expect(await answer.json()).toEqual({ detail: 'Webhook not found' });
    }
    expect(((await (await account.call('GET', `/v1/webhooks/${created.webhook_id}`)).json()) as Endpoint).enabled).toBe(
      false,
    );

    expect((await account.call('DELETE', `/v1/webhooks/${created.webhook_id}`)).status).toBe(204);
    expect((await account.call('GET', `/v1/webhooks/${created.webhook_id}`)).status).toBe(404);
    expect((await account.call('DELETE', `/v1/webhooks/${created.webhook_id}`)).status).toBe(404);
    expect((await account.call('GET', '/v1/webhooks')).status).toBe(200);
    expect((await service.call('GET', '/v1/webhooks')).status).toBe(401);
  });

  test('bad requests answer 422 in the spec’s shape and store nothing', async () => {
    const account = await service.account();
    const cases: [Record<string, unknown>, string][] = [
      [{ url: receiver.url('/x'), events: ['session.exploded'] }, 'events'],
      [{ url: receiver.url('/x'), events: [] }, 'events'],
      [{ url: receiver.url('/x'), events: ['session.ended', 'session.ended'] }, 'events'],
      [{ url: receiver.url('/x') }, 'events'],
      [{ url: 'ftp://example.com/hook', events: ['session.ended'] }, 'url'],
      [{ url: 'not a url', events: ['session.ended'] }, 'url'],
    ];
    for (const [body, field] of cases) {
      const answer = await account.call('POST', '/v1/webhooks', json(body));
      expect(answer.status).toBe(422);
      const problems = ((await answer.json()) as { detail: { loc: string[]; type: string }[] }).detail;
      expect(problems.some((p) => p.loc.includes(field))).toBe(true);
    }
    const created = await addWebhook(account, { url: receiver.url('/x'), events: ['session.ended'] });
    expect((await account.call('PATCH', `/v1/webhooks/${created.webhook_id}`, json({}))).status).toBe(422);
    expect(
      (await account.call('PATCH', `/v1/webhooks/${created.webhook_id}`, json({ url: 'gopher://x' }))).status,
    ).toBe(422);
    expect(
      ((await (await account.call('GET', '/v1/webhooks')).json()) as { webhooks: Endpoint[] }).webhooks.map(
        (w) => w.url,
      ),
    ).toEqual([receiver.url('/x')]);
  });

  test('an identity and a session: each subscribed event arrives once, signed, with its data; credits.low once per crossing', async () => {
    // 170 credits: the identity (50) and minutes of 10 cross the default threshold of 100 on the third minute.
    const account = await service.account({ credits: 170 });
    const all = await addWebhook(account, { url: receiver.url('/all'), events: ALL_EVENTS });
    const endedOnly = await addWebhook(account, { url: receiver.url('/ended'), events: ['session.ended'] });
    const credits = (await (await account.call('GET', '/v1/credits')).json()) as { low_balance_threshold: number };
    expect(credits.low_balance_threshold).toBe(100);

    const identity = await createAstronaut(account, { name: 'Ada' });
    const ready = await receiver.waitFor('identity.ready', () =>
      receiver.verified('/all', all.secret!).find((e) => e.type === 'identity.ready'),
    );
    expect(ready.data).toEqual({
      identity_id: identity.identity_id,
      name: 'Ada',
      pipeline_id: 'builtin',
      retrained: false,
    });

    const session = await startSession(account, { identity_id: identity.identity_id });
    const started = await receiver.waitFor('session.started', () =>
      receiver.verified('/all', all.secret!).find((e) => e.type === 'session.started'),
    );
    expect(started.data).toMatchObject({
      session_id: session.room_name,
      identity_id: identity.identity_id,
      avatar_enabled: true,
      language: 'en',
    });

    for (const minute of [0, 1, 2, 3])
      expect(await service.services.billing.chargeMinute(session.room_name, minute)).toBe('charged');
    const low = await receiver.waitFor('credits.low', () =>
      receiver.verified('/all', all.secret!).find((e) => e.type === 'credits.low'),
    );
    expect(low.data).toEqual({
      balance: 90,
      threshold: 100,
      charged: 10,
      kind: 'session_minute',
      reference: `session:${session.room_name}:minute:2`,
    });

    expect((await account.call('POST', `/v1/sessions/${session.room_name}/end`)).status).toBe(200);
    const ended = await receiver.waitFor('session.ended', () =>
      receiver.verified('/all', all.secret!).find((e) => e.type === 'session.ended'),
    );
    expect(ended.data).toMatchObject({
      session_id: session.room_name,
      identity_id: identity.identity_id,
      reason: 'ended_by_api',
      billed_minutes: 4,
      credits_charged: 40,
    });
    const endedElsewhere = await receiver.waitFor(
      'session.ended at /ended',
      () => receiver.verified('/ended', endedOnly.secret!)[0],
    );
    // One message per event: the same webhook-id at every endpoint.
    expect(endedElsewhere.id).toBe(ended.id);
    await Bun.sleep(300);
    expect(receiver.verified('/all', all.secret!).map((e) => e.type)).toEqual([
      'identity.ready',
      'session.started',
      'credits.low',
      'session.ended',
    ]);
    expect(receiver.verified('/ended', endedOnly.secret!).map((e) => e.type)).toEqual(['session.ended']);

    // The signature covers id, timestamp and body: a changed body, or another endpoint's secret, does not verify.
    const delivery = receiver.on('/all')[0]!;
    expect(() => new Webhook(all.secret!).verify(delivery.body.replace('Ada', 'Eve'), delivery.headers)).toThrow();
    expect(() => new Webhook(endedOnly.secret!).verify(delivery.body, delivery.headers)).toThrow();
    expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    const listed = await deliveriesOf(account, all.webhook_id);
    expect(listed.map((d) => [d.event_type, d.status, d.attempts, d.response_status])).toEqual([
      ['session.ended', 'delivered', 1, 204],
      ['credits.low', 'delivered', 1, 204],
      ['session.started', 'delivered', 1, 204],
      ['identity.ready', 'delivered', 1, 204],
    ]);
  }, 60_000);

  test('a receiver that fails twice gets the same message a third time, and the deliveries show each answer', async () => {
    const account = await service.account();
    const attemptsBefore = await attemptCounts();
    receiver.script.set('/flaky', [500, 503, 200]);
    const endpoint = await addWebhook(account, { url: receiver.url('/flaky'), events: ['session.ended'] });
    const sent = await account.call('POST', `/v1/webhooks/${endpoint.webhook_id}/test`);
    expect(sent.status).toBe(202);
    const queued = (await sent.json()) as Delivery;
    expect(queued).toMatchObject({ event_type: 'webhook.test', status: 'pending', attempts: 0 });
    await receiver.waitFor('three attempts', () => receiver.on('/flaky').length >= 3);
    const ids = receiver.on('/flaky').map((r) => r.headers['webhook-id']);
    expect(new Set(ids)).toEqual(new Set([queued.message_id]));
    // Each attempt is signed afresh (its own timestamp), and verifies.
    expect(receiver.verified('/flaky', endpoint.secret!).map((e) => e.type)).toEqual([
      'webhook.test',
      'webhook.test',
      'webhook.test',
    ]);
    const record = await latestDelivery(account, endpoint.webhook_id, 'delivered');
    expect(record).toMatchObject({
      message_id: queued.message_id,
      status: 'delivered',
      attempts: 3,
      response_status: 200,
      last_error: null,
      next_attempt_at: null,
    });
    expect(record.attempt_log.map((a) => a.status_code)).toEqual([500, 503, 200]);
    // And on /metrics: two retries, one delivery.
    const attemptsAfter = await attemptCounts();
    expect({
      retrying: attemptsAfter.retrying - attemptsBefore.retrying,
      delivered: attemptsAfter.delivered - attemptsBefore.delivered,
    }).toEqual({ retrying: 2, delivered: 1 });
    expect(record.attempt_log[0]!.error).toBe('answered 500: receiver says no');
    // About a second between attempts (WEBHOOKS_RETRY_SECONDS=1,…).
    const times = receiver.on('/flaky').map((r) => r.at);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(900);
  }, 30_000);

  test('a receiver that never takes it: retried on the schedule, then failed', async () => {
    const account = await service.account();
    receiver.script.set('/down', [500]);
    const endpoint = await addWebhook(account, { url: receiver.url('/down'), events: ['session.ended'] });
    await account.call('POST', `/v1/webhooks/${endpoint.webhook_id}/test`);
    const record = await latestDelivery(account, endpoint.webhook_id, 'failed');
    // The first attempt and one per retry (three), then no more.
    expect(record).toMatchObject({ status: 'failed', attempts: 4, response_status: 500, next_attempt_at: null });
    await Bun.sleep(1500);
    expect(receiver.on('/down')).toHaveLength(4);
  }, 30_000);

  test('settled deliveries older than WEBHOOKS_RETENTION_DAYS (30) are deleted; pending ones and recent ones stay', async () => {
    const account = await service.account();
    const endpoint = await addWebhook(account, { url: receiver.url('/old'), events: ['session.ended'] });
    const db = service.services.database.db;
    const longAgo = new Date(Date.now() - 31 * 86_400_000);
    const row = (id: string, status: 'delivered' | 'failed' | 'pending', createdAt: Date) => ({
      id,
      messageId: `msg_${id}`,
      endpointId: endpoint.webhook_id,
      accountId: account.accountId,
      eventType: 'session.ended',
      payload: '{}',
      status,
      createdAt,
      // Not due: the sender leaves the pending one alone during the test.
      nextAttemptAt: new Date(Date.now() + 3_600_000),
    });
    await db
      .insert(webhookDeliveries)
      .values([
        row('dlv_old_delivered', 'delivered', longAgo),
        row('dlv_old_failed', 'failed', longAgo),
        row('dlv_old_pending', 'pending', longAgo),
        row('dlv_recent', 'delivered', new Date()),
      ]);
    expect(await service.services.webhooks.prune()).toBe(2);
    expect((await deliveriesOf(account, endpoint.webhook_id)).map((d) => d.delivery_id).sort()).toEqual([
      'dlv_old_pending',
      'dlv_recent',
    ]);
  });

  test('a disabled endpoint receives nothing; enabled again, only what came after', async () => {
    const account = await service.account();
    const endpoint = await addWebhook(account, {
      url: receiver.url('/toggle'),
      events: ['identity.ready'],
      enabled: false,
    });
    await createAstronaut(account, { name: 'First' });
    await Bun.sleep(500);
    expect(receiver.on('/toggle')).toHaveLength(0);
    expect(await deliveriesOf(account, endpoint.webhook_id)).toEqual([]);
    await account.call('PATCH', `/v1/webhooks/${endpoint.webhook_id}`, json({ enabled: true }));
    await createAstronaut(account, { name: 'Second' });
    const events = await receiver.waitFor('identity.ready', () => receiver.verified('/toggle', endpoint.secret!)[0]);
    expect(events.data.name).toBe('Second');
  }, 30_000);
});
