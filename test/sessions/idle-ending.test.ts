// The control plane's side of an idle visitor (docs/api.md#sessions-idle), on both engines:
// the job's `visitor_idle` report is answered, the room gets the `idle` notice before
// it closes, and the session ends `idle` billed as every ending (the minutes charged stay,
// the rest of the hold goes back). The test plays the job; the agent's own timer is
// test/agent/idle.test.ts, the whole of it test/conversation/session-direction.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { NOTICE_TOPIC } from '../../src/contract/index.ts';
import type { IdentityBody } from '../support/forms.ts';
import { jobReporter, jobReportService } from '../support/job-session.ts';
import { ENGINES, type TestAccount, type TestService } from '../support/service.ts';
import { eventually, joinAsVisitor, type StartedSession, untilDataReaches } from '../support/visitor.ts';

describe.each(ENGINES)('an idle visitor reported on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let identity: IdentityBody;

  beforeAll(async () => {
    ({ service, account, identity } = await jobReportService(engine, {
      env: { CREDITS_PER_AVATAR_MINUTE: '10' },
      credits: 100,
    }));
  });
  afterAll(() => service.stop());

  test('the notice reaches the visitor, then the session ends `idle`, billed up to then', async () => {
    const response = await account.call('POST', '/v1/sessions/start', {
      body: JSON.stringify({ identity_id: identity.identity_id, idle_timeout_seconds: 5 }),
      headers: { 'content-type': 'application/json' },
    });
    const session = (await response.json()) as StartedSession;
    const report = await jobReporter(service, session.room_name);
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    try {
      // The job reports an idle visitor only after seconds of silence; this one is reported at once.
      await untilDataReaches(visitor, service.services.livekit.rooms, session.room_name);
      expect((await report({ type: 'avatar_streaming' })).status).toBe(200);
      expect((await report({ type: 'minute', index: 0 })).status).toBe(200);
      const idle = await report({ type: 'visitor_idle' });
      expect(idle.status).toBe(200);
      expect(await idle.json()).toEqual({ ok: true });
      await Promise.race([visitor.disconnected, Bun.sleep(10_000)]);
      const noticesAtDisconnect = [...visitor.notices];
      expect(noticesAtDisconnect).toContainEqual({
        topic: NOTICE_TOPIC,
        payload: { type: 'idle', session_id: session.room_name },
      });
      const ended = await eventually(
        async () => {
          const read = (await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as Record<
            string,
            unknown
          >;
          return read.status === 'ended' ? read : undefined;
        },
        5_000,
        'the session to end',
      );
      expect(ended).toMatchObject({ end_reason: 'idle', billed_minutes: 1, credits_charged: 10 });
      expect(await service.services.ledger.balance(account.accountId)).toBe(90);
      // A job that says it again, late: the session has ended.
      expect((await report({ type: 'visitor_idle' })).status).toBe(409);
      expect((await service.services.livekit.rooms.listRooms([session.room_name])).length).toBe(0);
    } finally {
      await visitor.leave().catch(() => undefined);
    }
  }, 30_000);
});
