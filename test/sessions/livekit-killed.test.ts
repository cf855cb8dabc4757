// The embedded LiveKit server killed with SIGKILL mid-session (docs/reliability.md): the
// service restarts it, the session whose room died with it ends (`room_closed`: the sweep
// finds its room gone, as no webhook will say so), nothing more is charged for it, and the
// next session works (its avatar streams).
import { describe, expect, test } from 'bun:test';
import { type RemoteTrack, TrackKind } from '@livekit/rtc-node';
import { and, eq, like } from 'drizzle-orm';
import { creditLedger } from '../../src/credits/schema.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { createAstronaut, FrameLog, joinWatchingVideo, startSession } from '../avatar/support.ts';
import { suiteAgentService } from '../support/suite-agent-service.ts';
import { eventually, joinAsVisitor } from '../support/visitor.ts';

const MINUTE_SECONDS = 3;

describe('LiveKit killed mid-session', () => {
  const suite = suiteAgentService('pglite', { BILLING_INTERVAL_SECONDS: String(MINUTE_SECONDS) }, 10_000);

  test('the server comes back; the session in the dead room ends and is charged no more; a new session streams', async () => {
    const db = suite.service.services.database.db;
    const livekit = suite.service.services.localLivekit!;
    const identity = await createAstronaut(suite.account, { language: 'en' });
    const session = await startSession(suite.account, { identity_id: identity.identity_id });
    const { visitor, videos } = await joinWatchingVideo(session);
    const row = async () => (await db.select().from(sessions).where(eq(sessions.id, session.room_name)))[0]!;
    await eventually(() => (videos[0]?.frames.length ?? 0) >= 25, 30_000, 'the avatar streaming');
    await eventually(async () => (await row()).billedMinutes >= 1, 15_000, 'a minute charged');

    const pid = livekit.pid!;
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    await eventually(
      () => livekit.restarts === 1 && livekit.pid !== undefined && livekit.pid !== pid,
      30_000,
      'LiveKit restarted',
    );
    // No room_finished webhook comes from a killed server: the sweep finds the room gone.
    const ended = await eventually(
      async () => ((await row()).status === 'ended' ? await row() : undefined),
      45_000,
      'the session ended',
    );
    console.log(
      `LiveKit SIGKILL: restarted; session ended after ${Date.now() - killedAt} ms, reason ${ended.endReason}, ${ended.billedMinutes} minutes billed`,
    );
    expect(ended.endReason).toBe('room_closed');
    // Nothing charged for a minute that began after the room died (one under way at the kill may land).
    const minutes = await db
      .select()
      .from(creditLedger)
      .where(
        and(eq(creditLedger.kind, 'session_minute'), like(creditLedger.reference, `session:${session.room_name}:%`)),
      );
    expect(minutes.length).toBe(ended.billedMinutes);
    for (const minute of minutes) expect(minute.createdAt.getTime()).toBeLessThan(killedAt + MINUTE_SECONDS * 1000);
    await Bun.sleep(2 * MINUTE_SECONDS * 1000);
    expect((await row()).billedMinutes).toBe(ended.billedMinutes);
    await visitor.leave().catch(() => undefined);

    // The service works on: a new session's avatar streams through the restarted server.
    const next = await startSession(suite.account, { identity_id: identity.identity_id });
    const nextVideos: FrameLog[] = [];
    const second = await joinAsVisitor(next, {
      onTrack: (track: RemoteTrack) =>
        void (track.kind === TrackKind.KIND_VIDEO && nextVideos.push(new FrameLog(track))),
    });
    try {
      await eventually(() => (nextVideos[0]?.frames.length ?? 0) >= 25, 60_000, 'the next session’s avatar');
    } finally {
      await second.leave();
    }
    // Every hold given back or paid: the ledger sums to the balance.
    const balance = (await suite.service.services.ledger.balance(suite.account.accountId))!;
    const entries = await suite.service.services.ledger.entries(suite.account.accountId, 1000);
    expect(entries.reduce((sum, e) => sum + e.amount, 0)).toBe(balance);
  }, 240_000);
});
