// turn_metrics job reports through the real report route (docs/api.md#session-metrics): many
// at once each count (the row lock), a redelivery counts once and moves no histogram twice,
// the session's `metrics` say what was folded, a late report after the end is kept, and a
// malformed one is refused.
import { describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { registry } from '../../src/metrics/index.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { jobReportSuite, reportedSession } from '../support/job-session.ts';
import { ENGINES } from '../support/service.ts';

const turn = (turn_id: string, overrides: Record<string, unknown> = {}) => ({
  type: 'turn_metrics',
  turn_id,
  reply: true,
  voice_to_voice_ms: 1000,
  stages: { stt_ms: 120, eou_ms: 600, llm_ttft_ms: 250, tts_ttfb_ms: 180 },
  interrupted: false,
  providers: { stt: 'offline', llm: 'offline', tts: 'offline' },
  video: { frames: 50, seconds: 2 },
  ...overrides,
});

/** A histogram's observation count (all label sets, or those matching `labels`), as prom-client holds it. */
async function observations(name: string, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await registry.getSingleMetric(name)!.get();
  // A histogram's values carry their series name (_bucket, _sum, _count); a counter's do not.
  return (values as { metricName?: string; labels: Record<string, string | number>; value: number }[])
    .filter((v) => v.metricName === `${name}_count` || (v.metricName === undefined && name.endsWith('_total')))
    .filter((v) => Object.entries(labels).every(([k, value]) => String(v.labels[k]) === value))
    .reduce((sum, v) => sum + v.value, 0);
}

describe.each(ENGINES)('turn metrics reports on %s', (engine) => {
  const suite = jobReportSuite(engine, {
    env: { SESSION_SWEEP_INTERVAL_SECONDS: '3600' },
    credits: 1000,
  });

  const startSession = () => reportedSession(suite.service, suite.account, suite.identity);
  const metricsOf = async (id: string) =>
    ((await (await suite.account.call('GET', `/v1/sessions/${id}`)).json()) as { metrics: Record<string, unknown> })
      .metrics;

  test('a session with no report yet: metrics with nulls and zeros', async () => {
    const session = await startSession();
    expect(await metricsOf(session.id)).toEqual({
      first_frame_ms: null,
      voice_to_voice_ms: { p50: null, p95: null },
      fps: null,
      turns: 0,
      interruptions: 0,
      tool_calls: 0,
      providers: { stt: null, llm: null, tts: null },
    });
    await suite.account.call('POST', `/v1/sessions/${session.id}/end`);
  });

  test('twenty turns at once each count, each delivered three times counts once; the histograms move once per turn', async () => {
    const session = await startSession();
    const before = {
      v2v: await observations('likeness_turn_voice_to_voice_seconds', { provider_set: 'offline' }),
      llm: await observations('likeness_turn_stage_seconds', { stage: 'llm' }),
      fps: await observations('likeness_avatar_delivered_fps'),
      interruptions: await observations('likeness_turn_interruptions_total', { provider_set: 'offline' }),
    };
    // 1..20 s; turn 7 cut off; every report sent three times, all at once.
    const reports = Array.from({ length: 20 }, (_, i) =>
      turn(`item_${i + 1}`, { voice_to_voice_ms: (i + 1) * 1000, interrupted: i === 6 }),
    );
    const answers = await Promise.all([...reports, ...reports, ...reports].map((body) => session.report(body)));
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200]));
    // The greeting: no reply, no sample.
    expect((await session.report(turn('greeting', { reply: false, voice_to_voice_ms: null }))).status).toBe(200);

    expect(await metricsOf(session.id)).toMatchObject({
      voice_to_voice_ms: { p50: 10_000, p95: 19_000 },
      fps: 25,
      turns: 20,
      interruptions: 1,
      providers: { stt: 'offline', llm: 'offline', tts: 'offline' },
    });
    const [row] = await suite.service.services.database.db
      .select({ quality: sessions.quality })
      .from(sessions)
      .where(eq(sessions.id, session.id));
    expect(row!.quality!.turn_ids.toSorted()).toEqual([...reports.map((r) => r.turn_id), 'greeting'].toSorted());

    expect((await observations('likeness_turn_voice_to_voice_seconds', { provider_set: 'offline' })) - before.v2v).toBe(
      20,
    );
    expect((await observations('likeness_turn_stage_seconds', { stage: 'llm' })) - before.llm).toBe(21);
    expect((await observations('likeness_avatar_delivered_fps')) - before.fps).toBe(21);
    expect(
      (await observations('likeness_turn_interruptions_total', { provider_set: 'offline' })) - before.interruptions,
    ).toBe(1);

    // The last turn's report may come as the job leaves an ended session: it is kept.
    await suite.account.call('POST', `/v1/sessions/${session.id}/end`);
    expect((await session.report(turn('item_21', { voice_to_voice_ms: 500 }))).status).toBe(200);
    expect(await metricsOf(session.id)).toMatchObject({ turns: 21, voice_to_voice_ms: { p50: 10_000 } });
  });

  test('a malformed report, or one with another token, is refused and counts nothing', async () => {
    const session = await startSession();
    for (const bad of [
      turn(''),
      turn('a', { voice_to_voice_ms: -5 }),
      turn('a', { stages: {} }),
      turn('a', { video: { frames: 1.5, seconds: 1 } }),
      turn('a', { providers: { stt: 'offline' } }),
    ]) {
      expect((await session.report(bad)).status).toBe(422);
    }
    expect((await session.report(turn('a'), 'not-the-token')).status).toBe(401);
    expect(await metricsOf(session.id)).toMatchObject({ turns: 0, voice_to_voice_ms: { p50: null } });
    await suite.account.call('POST', `/v1/sessions/${session.id}/end`);
  });
});
