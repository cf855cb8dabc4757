// Folding the job's turn_metrics reports into a session's quality (src/sessions/quality.ts),
// and the `metrics` GET /v1/sessions/{id} derives from it: a redelivered turn counts once,
// p50/p95 are nearest-rank over the answered turns, the greeting is no reply, fps is frames
// over time, and the sample and id lists stay bounded.
import { describe, expect, test } from 'bun:test';
import type { SessionQuality, TurnMetricsReport } from '../../src/contract/index.ts';
import {
  foldTurn,
  MAX_SAMPLES,
  MAX_TURN_IDS,
  percentile,
  providerSet,
  sessionMetrics,
} from '../../src/sessions/quality.ts';

const CLOUD = { stt: 'deepgram', llm: 'openai-compatible', tts: 'elevenlabs' };

function turnReport(overrides: Partial<TurnMetricsReport> = {}): TurnMetricsReport {
  return {
    type: 'turn_metrics',
    turn_id: 'item_1',
    reply: true,
    voice_to_voice_ms: 1000,
    stages: { stt_ms: 150, eou_ms: 600, llm_ttft_ms: 300, tts_ttfb_ms: 200 },
    interrupted: false,
    providers: CLOUD,
    video: { frames: 250, seconds: 10 },
    ...overrides,
  };
}

const foldAll = (reports: TurnMetricsReport[]) =>
  reports.reduce<SessionQuality | null>((quality, report) => foldTurn(quality, report) ?? quality, null);

describe('folding turn reports', () => {
  test('a turn delivered twice counts once: turns, interruptions, samples and frames', () => {
    const first = foldTurn(null, turnReport({ interrupted: true }))!;
    expect(foldTurn(first, turnReport({ interrupted: true }))).toBeNull();
    const quality = foldAll([
      turnReport({ interrupted: true }),
      turnReport({ interrupted: true }),
      turnReport({ turn_id: 'item_2', voice_to_voice_ms: 3000 }),
      turnReport({ turn_id: 'item_2', voice_to_voice_ms: 3000 }),
    ]);
    expect(quality).toMatchObject({
      turns: 2,
      interruptions: 1,
      voice_to_voice_ms: [1000, 3000],
      frames: 500,
      frame_seconds: 20,
      turn_ids: ['item_1', 'item_2'],
    });
  });

  test('tool calls count once per turn, whatever their outcome; a row from before tools reads 0', () => {
    const call = (outcome: 'ok' | 'timeout') => ({ name: 'check_order', outcome, duration_ms: 120 });
    const quality = foldAll([
      turnReport({ tool_calls: [call('ok'), call('timeout')] }),
      turnReport({ tool_calls: [call('ok'), call('timeout')] }), // redelivered
      turnReport({ turn_id: 'item_2', tool_calls: [call('ok')] }),
      turnReport({ turn_id: 'item_3' }),
    ]);
    expect(sessionMetrics({ joinedAt: null, streamingStartedAt: null, quality }).tool_calls).toBe(3);
    const before: SessionQuality = { ...quality! };
    delete (before as { tool_calls?: number }).tool_calls;
    expect(sessionMetrics({ joinedAt: null, streamingStartedAt: null, quality: before }).tool_calls).toBe(0);
    expect(foldTurn(before, turnReport({ turn_id: 'item_4', tool_calls: [call('ok')] }))).toMatchObject({
      tool_calls: 1,
    });
  });

  test('p50 and p95 are nearest-rank over the answered turns; the greeting and unmeasured turns add no sample', () => {
    // 1..20 s in a shuffled order: p50 is the 10th value, p95 the 19th.
    const order = [7, 3, 19, 1, 12, 20, 5, 16, 9, 14, 2, 18, 11, 4, 15, 8, 13, 6, 17, 10];
    const quality = foldAll([
      turnReport({
        turn_id: 'greeting',
        reply: false,
        voice_to_voice_ms: null,
        stages: { stt_ms: null, eou_ms: null, llm_ttft_ms: null, tts_ttfb_ms: 200 },
      }),
      ...order.map((s) => turnReport({ turn_id: `item_${s}`, voice_to_voice_ms: s * 1000 })),
      turnReport({ turn_id: 'unmeasured', voice_to_voice_ms: null }),
    ]);
    const metrics = sessionMetrics({ joinedAt: null, streamingStartedAt: null, quality });
    expect(metrics.voice_to_voice_ms).toEqual({ p50: 10_000, p95: 19_000 });
    expect(metrics.turns).toBe(21); // the unmeasured reply is still a reply; the greeting is not
    expect(percentile([], 50)).toBeNull();
    expect(percentile([42], 95)).toBe(42);
    expect(percentile([100, 200], 50)).toBe(100);
    expect(percentile([100, 200], 95)).toBe(200);
  });

  test('fps is all frames over all time (not a mean of intervals); null without a face or under a second of it', () => {
    const quality = foldAll([
      turnReport({ turn_id: 'a', video: { frames: 250, seconds: 10 } }),
      turnReport({ turn_id: 'b', video: { frames: 20, seconds: 2 } }),
    ]);
    // (250 + 20) / 12 = 22.5, where the mean of 25 and 10 would say 17.5.
    expect(sessionMetrics({ joinedAt: null, streamingStartedAt: null, quality }).fps).toBe(22.5);
    expect(
      sessionMetrics({ joinedAt: null, streamingStartedAt: null, quality: foldAll([turnReport({ video: null })]) }).fps,
    ).toBeNull();
    expect(
      sessionMetrics({
        joinedAt: null,
        streamingStartedAt: null,
        quality: foldAll([turnReport({ video: { frames: 12, seconds: 0.5 } })]),
      }).fps,
    ).toBeNull();
  });

  test('a session with no report yet: every figure null or zero; first frame from the row', () => {
    const joinedAt = new Date('2026-11-24T09:30:04.000Z');
    expect(
      sessionMetrics({ joinedAt, streamingStartedAt: new Date('2026-11-24T09:30:04.600Z'), quality: null }),
    ).toEqual({
      first_frame_ms: 600,
      voice_to_voice_ms: { p50: null, p95: null },
      fps: null,
      turns: 0,
      interruptions: 0,
      tool_calls: 0,
      providers: { stt: null, llm: null, tts: null },
    });
    // The avatar streamed before the visitor came: 0, as the first-frame histogram counts it.
    expect(
      sessionMetrics({ joinedAt, streamingStartedAt: new Date('2026-11-24T09:30:01.000Z'), quality: null })
        .first_frame_ms,
    ).toBe(0);
    expect(sessionMetrics({ joinedAt: null, streamingStartedAt: new Date(), quality: null }).first_frame_ms).toBeNull();
  });

  test('the samples and the remembered ids stay bounded, newest kept', () => {
    const reports = Array.from({ length: MAX_SAMPLES + 50 }, (_, i) =>
      turnReport({ turn_id: `item_${i}`, voice_to_voice_ms: i }),
    );
    const quality = foldAll(reports)!;
    expect(quality.voice_to_voice_ms).toHaveLength(MAX_SAMPLES);
    expect(quality.voice_to_voice_ms.at(-1)).toBe(MAX_SAMPLES + 49);
    expect(quality.turn_ids).toHaveLength(MAX_TURN_IDS);
    expect(quality.turns).toBe(MAX_SAMPLES + 50);
    // A recent turn redelivered is still recognised.
    expect(foldTurn(quality, reports.at(-2)!)).toBeNull();
  });

  test('provider sets: all offline, all cloud, or mixed', () => {
    expect(providerSet({ stt: 'offline', llm: 'offline', tts: 'offline' })).toBe('offline');
    expect(providerSet(CLOUD)).toBe('cloud');
    expect(providerSet({ ...CLOUD, llm: 'offline' })).toBe('mixed');
  });
});
