// How many sessions one agent worker takes (AGENT_MAX_JOBS), and the avatar settings as the
// configuration reads them. At capacity the worker tells LiveKit it is full, and a further
// session gets no agent from it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { availableParallelism } from 'node:os';
import { AGENT_JOBS_PER_CORE, loadAgentSettings, loadConfig, OFFLINE_AGENT_JOBS_PER_CORE } from '../../src/config.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { eventually, joinAsVisitor, sessionEnded, type Visitor } from '../support/visitor.ts';
import { startSession } from './support.ts';

describe('avatar settings', () => {
  test('AGENT_MAX_JOBS: 4 sessions per core with cloud providers (8 on 2 cores), 1.5 with offline models, a whole number ≥ 1 when set', () => {
    expect([AGENT_JOBS_PER_CORE, OFFLINE_AGENT_JOBS_PER_CORE]).toEqual([4, 1.5]);
    const cores = availableParallelism();
    const cloud = { DEEPGRAM_API_KEY: 'k', OPENAI_API_KEY: 'k', ELEVENLABS_API_KEY: 'k' };
    expect(loadAgentSettings(cloud).maxJobs).toBe(Math.max(1, Math.floor(4 * cores)));
    expect(loadAgentSettings({}).maxJobs).toBe(Math.max(1, Math.floor(1.5 * cores)));
    // One offline model in the job is enough for the offline share.
    expect(loadAgentSettings({ ...cloud, ELEVENLABS_API_KEY: '' }).maxJobs).toBe(Math.max(1, Math.floor(1.5 * cores)));
    expect(loadAgentSettings({ AGENT_MAX_JOBS: '9' }).maxJobs).toBe(9);
    expect(() => loadAgentSettings({ AGENT_MAX_JOBS: '0' })).toThrow('AGENT_MAX_JOBS');
    expect(() => loadAgentSettings({ AGENT_MAX_JOBS: 'many' })).toThrow('AGENT_MAX_JOBS');
  });

  test('AGENT_PIPELINE_MODULES: a comma-separated list, none by default', () => {
    expect(loadAgentSettings({}).pipelineModules).toEqual([]);
    expect(loadAgentSettings({ AGENT_PIPELINE_MODULES: ' ./a.ts, @acme/avatar ,' }).pipelineModules).toEqual([
      './a.ts',
      '@acme/avatar',
    ]);
  });

  test('AVATAR_VIDEO_CODEC: h264 by default; vp8 when set; nothing else', () => {
    expect(loadAgentSettings({}).avatarVideoCodec).toBe('h264');
    expect(loadAgentSettings({ AVATAR_VIDEO_CODEC: 'vp8' }).avatarVideoCodec).toBe('vp8');
    expect(() => loadAgentSettings({ AVATAR_VIDEO_CODEC: 'av1' })).toThrow('AVATAR_VIDEO_CODEC');
  });

  test('AVATAR_LANDSCAPE: on by default; true/false (1/0, yes/no, on/off) when set', () => {
    expect(loadConfig({}).sessions.landscapeVideo).toBe(true);
    expect(loadConfig({ AVATAR_LANDSCAPE: 'false' }).sessions.landscapeVideo).toBe(false);
    expect(loadConfig({ AVATAR_LANDSCAPE: '0' }).sessions.landscapeVideo).toBe(false);
    expect(loadConfig({ AVATAR_LANDSCAPE: 'On' }).sessions.landscapeVideo).toBe(true);
    expect(() => loadConfig({ AVATAR_LANDSCAPE: 'portrait' })).toThrow('AVATAR_LANDSCAPE');
  });
});

// With admission off (SESSION_ADMISSION=off, for workers that send no heartbeats), a start
// beyond the fleet's capacity still opens a room; this is the fallback for that case and for
// two starts racing for the last slot. Admission itself: test/sessions/admission.test.ts.
describe('a worker at capacity (AGENT_MAX_JOBS=1), admission off', () => {
  let service: TestService;
  let account: TestAccount;
  const saved = process.env.AGENT_MAX_JOBS;

  beforeAll(async () => {
    // The worker reads it from the environment, as `likeness serve` does.
    process.env.AGENT_MAX_JOBS = '1';
    // A session without an agent is given up on after 15 s (60 by default).
    service = await startTestService('pglite', {
      livekit: 'local',
      agent: true,
      env: { SESSION_AGENT_TIMEOUT_SECONDS: '15', SESSION_ADMISSION: 'off' },
    });
    account = await service.account();
  });
  afterAll(async () => {
    await service?.stop();
    if (saved === undefined) delete process.env.AGENT_MAX_JOBS;
    else process.env.AGENT_MAX_JOBS = saved;
  });

  test('takes one session; the next gets no agent, and its visitor is told and let go at SESSION_AGENT_TIMEOUT_SECONDS', async () => {
    const first = await startSession(account, {});
    const visitors: Visitor[] = [await joinAsVisitor(first, { audioOnly: true })];
    try {
      await eventually(() => visitors[0]!.agent(), 20_000, 'the first session’s agent');
      // The worker reports its load every 2.5 s.
      await Bun.sleep(6_000);
      const second = await startSession(account, {});
      const startedAt = Date.now();
      visitors.push(await joinAsVisitor(second, { audioOnly: true }));
      await Bun.sleep(6_000);
      expect(visitors[1]!.agent()).toBeUndefined();
      // LiveKit 1.13 does not offer that dispatch again, even once the first session ends:
      // rather than leave the visitor facing an empty room, the session ends.
      const reason = await Promise.race([visitors[1]!.disconnected, Bun.sleep(30_000).then(() => 'still connected')]);
      expect(reason).not.toBe('still connected');
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(15_000);
      expect(visitors[1]!.notices).toContainEqual({
        topic: 'likeness.notice',
        payload: { type: 'agent_unavailable', session_id: second.room_name },
      });
      // The room closes before the end is written: the visitor may hear of it first.
      const ended = await sessionEnded(account, second.room_name);
      expect(ended).toMatchObject({
        status: 'ended',
        end_reason: 'agent_unavailable',
        billed_minutes: 0,
        credits_charged: 0,
      });
      // The first session, whose agent came, goes on.
      const running = (await (await account.call('GET', `/v1/sessions/${first.room_name}`)).json()) as Record<
        string,
        unknown
      >;
      expect(running.status).toBe('running');
      await account.call('POST', `/v1/sessions/${first.room_name}/end`);
    } finally {
      for (const visitor of visitors) await visitor.leave().catch(() => undefined);
    }
  }, 120_000);
});
