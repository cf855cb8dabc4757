// An agent worker killed mid-conversation (docs/api.md#session-lifecycle): SIGKILL to a
// `likeness serve --role agent` process and its job processes, as a machine or container
// dying would. The control plane notices the session missing from every live worker's
// heartbeat, dispatches it again, and the other worker brings the avatar back into the same
// room: the visitor stays connected throughout, and minutes are billed only while an avatar
// streams. bench/failover measures the gap; here it must only be well under a stalled one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { TrackKind, type RemoteTrack } from '@livekit/rtc-node';
import { eq } from 'drizzle-orm';
import { rm } from 'node:fs/promises';
import { sessions } from '../../src/sessions/schema.ts';
import { createAstronaut, FrameLog, startSession } from '../avatar/support.ts';
import { startAgentProcess, type AgentProcess } from '../support/agent-process.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { eventually, joinAsVisitor } from '../support/visitor.ts';

/** Seconds per billed minute: short, so minutes pass during the test. */
const MINUTE_SECONDS = 4;

describe('an agent worker killed mid-conversation', () => {
  const dirs: string[] = [];
  const agents: AgentProcess[] = [];
  let service: TestService;
  let account: TestAccount;

  beforeAll(async () => {
    service = await startTestService('postgres', { livekit: 'local', env: { SESSION_ADMISSION: 'workers', BILLING_INTERVAL_SECONDS: String(MINUTE_SECONDS) } });
    account = await service.account({ credits: 100_000 });
    const { livekit } = service.services;
    const spawn = () => startAgentProcess({ livekit, internalUrl: service.url, dirs, env: { AGENT_MAX_JOBS: '1' } });
    agents.push(...(await Promise.all([spawn(), spawn()])));
  }, 120_000);
  afterAll(async () => {
    for (const agent of agents) agent.kill();
    await service?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('the other worker brings the avatar back into the same room; the visitor stays; no minute is billed for the gap', async () => {
    const identity = await createAstronaut(account, { language: 'en' });
    const session = await startSession(account, { identity_id: identity.identity_id });
    const videos: FrameLog[] = [];
    const visitor = await joinAsVisitor(session, { onTrack: (track: RemoteTrack) => void (track.kind === TrackKind.KIND_VIDEO && videos.push(new FrameLog(track))) });
    const row = async () => (await service.services.database.db.select().from(sessions).where(eq(sessions.id, session.room_name)))[0]!;
    try {
      await eventually(() => (videos[0]?.frames.length ?? 0) >= 25, 30_000, 'the first avatar streaming');
      const first = await eventually(async () => (await row()).agentWorkerId, 10_000, 'the worker running the session');
      const victim = agents.find((a) => a.workerId === first)!;
      const survivor = agents.find((a) => a !== victim)!;
      // A minute or more billed before the kill.
      await eventually(async () => (await row()).billedMinutes >= 1, 15_000, 'a billed minute');

      victim.kill();
      const killedAt = performance.now();
      const billedAtKill = (await row()).billedMinutes;
      // The new avatar: a second video track, from the surviving worker's job.
      await eventually(() => (videos[1]?.frames.length ?? 0) > 0, 30_000, 'the avatar back');
      const gapMs = videos[1]!.frames[0]!.at - killedAt;
      console.log(`failover: SIGKILL → first avatar frame again in ${Math.round(gapMs)} ms`);
      expect(gapMs).toBeLessThan(10_000);
      // The row follows the workers' heartbeats (every 0.5 s), which may come after the first frame.
      await eventually(async () => (await row()).agentWorkerId === survivor.workerId, 3_000, 'the survivor listed as the session\'s worker');
      // The visitor never left the room, and the session runs on.
      expect(visitor.room.isConnected).toBe(true);
      expect((await row()).status).toBe('running');

      // Billing went on from the minutes billed, at the new avatar's pace: no minute for the gap
      // beyond the one the new avatar's first frame starts.
      const billedAtReturn = (await row()).billedMinutes;
      expect(billedAtReturn).toBeLessThanOrEqual(billedAtKill + 1);
      await Bun.sleep(MINUTE_SECONDS * 1000 + 1500);
      const later = await row();
      expect(later.billedMinutes).toBeGreaterThan(billedAtReturn);
      expect(later.creditsCharged).toBe(later.billedMinutes * service.config.credits.perAvatarMinute);
    } finally {
      for (const video of videos) video.close();
      await visitor.leave();
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
    }
  }, 120_000);
});
