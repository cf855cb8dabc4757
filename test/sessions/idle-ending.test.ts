// The control plane's side of an idle visitor (docs/api.md#sessions-idle), on both engines:
// the job's `visitor_idle` report is answered, the room gets the `idle` notice before
// it closes, and the session ends `idle` billed as every ending (the minutes charged stay,
// the rest of the hold goes back). The test plays the job; the agent's own timer is
// test/agent/idle.test.ts, the whole of it test/conversation/session-direction.test.ts.
import { describe, expect, test } from 'bun:test';
import { NOTICE_TOPIC } from '../../src/contract/index.ts';
import { jobReporter, jobReportSuite } from '../support/job-session.ts';
import { ENGINES } from '../support/service.ts';
import { postSessionStart } from '../support/session-start.ts';
import { joinAsVisitor, type StartedSession, sessionEnded, untilDataReaches } from '../support/visitor.ts';

describe.each(ENGINES)('an idle visitor reported on %s', (engine) => {
  const suite = jobReportSuite(engine, {
    env: { CREDITS_PER_AVATAR_MINUTE: '10' },
    credits: 100,
  });

  test('the notice reaches the visitor, then the session ends `idle`, billed up to then', async () => {
    const response = await postSessionStart(suite.account, {
      identity_id: suite.identity.identity_id,
      idle_timeout_seconds: 5,
    });
    const session = (await response.json()) as StartedSession;
    const report = await jobReporter(suite.service, session.room_name);
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    try {
      // The job reports an idle visitor only after seconds of silence; this one is reported at once.
      await untilDataReaches(visitor, suite.service.services.livekit.rooms, session.room_name);
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
      const ended = await sessionEnded(suite.account, session.room_name, 5_000);
      expect(ended).toMatchObject({ end_reason: 'idle', billed_minutes: 1, credits_charged: 10 });
      expect(await suite.service.services.ledger.balance(suite.account.accountId)).toBe(90);
      // A job that says it again, late: the session has ended.
      expect((await report({ type: 'visitor_idle' })).status).toBe(409);
      expect((await suite.service.services.livekit.rooms.listRooms([session.room_name])).length).toBe(0);
    } finally {
      await visitor.leave().catch(() => undefined);
    }
  }, 30_000);
});
