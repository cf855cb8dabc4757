// An order the session's agent never answers (docs/api.md#sessions-direct): an agent
// participant is in the room, the visitor too, but nothing takes the order. The call answers
// 504 after its bounded wait (ORDER_WAIT_MS), saying the order may still be carried out, and
// the order is kept without an outcome.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Room } from '@livekit/rtc-node';
import { eq } from 'drizzle-orm';
import { AccessToken } from 'livekit-server-sdk';
import { ORDER_TOPIC } from '../../src/contract/index.ts';
import { ORDER_WAIT_MS } from '../../src/sessions/orders.ts';
import { sessionOrders } from '../../src/sessions/schema.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { postSessionStart } from '../support/session-start.ts';
import { joinAsVisitor, type StartedSession } from '../support/visitor.ts';

describe.each(ENGINES)('an order nobody answers (%s)', (engine) => {
  let service: TestService;
  let account: TestAccount;
  beforeAll(async () => {
    service = await startTestService(engine, { livekit: 'local' });
    account = await service.account({ credits: 10_000 });
  }, 120_000);
  afterAll(() => service.stop());

  test('504 after the bounded wait, the order kept without an outcome; the agent heard it once', async () => {
    const started = await postSessionStart(account, { avatar_enabled: false, idle_timeout_seconds: 0 });
    expect(started.status).toBe(200);
    const session = (await started.json()) as StartedSession;
    const { url, apiKey, apiSecret } = service.services.livekit;
    const token = new AccessToken(apiKey, apiSecret, { identity: 'agent-silent' });
    token.kind = 'agent';
    token.addGrant({ room: session.room_name, roomJoin: true, canPublish: true, canSubscribe: true });
    const silentAgent = new Room();
    const heard: unknown[] = [];
    silentAgent.on('dataReceived', (payload, participant, _kind, topic) => {
      if (topic === ORDER_TOPIC)
        heard.push({ from: participant?.identity ?? null, order: JSON.parse(new TextDecoder().decode(payload)) });
    });
    await silentAgent.connect(url, await token.toJwt());
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    try {
      const sent = performance.now();
      const response = await account.call('POST', `/v1/sessions/${session.room_name}/say`, {
        body: JSON.stringify({ text: 'Is anyone there?' }),
        headers: { 'content-type': 'application/json' },
      });
      const waited = performance.now() - sent;
      expect(response.status).toBe(504);
      expect(((await response.json()) as { detail: string }).detail).toContain('may still be carried out');
      expect(waited).toBeGreaterThanOrEqual(ORDER_WAIT_MS - 50);
      expect(heard).toEqual([
        { from: null, order: expect.objectContaining({ operation: 'say', text: 'Is anyone there?' }) },
      ]);
      const [row] = await service.services.database.db
        .select()
        .from(sessionOrders)
        .where(eq(sessionOrders.sessionId, session.room_name));
      expect(row).toMatchObject({ operation: 'say', outcome: null, answeredAt: null });
    } finally {
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
      await silentAgent.disconnect().catch(() => undefined);
    }
  }, 60_000);
});
