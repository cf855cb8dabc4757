// What a job reports of its tools (docs/api.md#sessions-transcript, #session-metrics): a `tool`
// turn keeps its call and an agent turn the documents it answered from, shown on the transcript
// (null on other turns); a turn's tool calls are counted on /metrics by outcome once, however
// often the report is delivered, and in the session's `metrics`; and an `agent_ended` report
// (the agent's end_session tool) ends the session `agent_ended`.
import { describe, expect, test } from 'bun:test';
import { jobReportSuite, reportedSession } from '../support/job-session.ts';
import { ENGINES } from '../support/service.ts';

const METRICS_TOKEN = 'plumbing-metrics-token';

/** A sample's value from the Prometheus text /metrics answers (0 when absent). */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe.each(ENGINES)('tool turns, tool metrics and agent endings on %s', (engine) => {
  const suite = jobReportSuite(engine, {
    env: { SESSION_SWEEP_INTERVAL_SECONDS: '3600', METRICS_TOKEN },
    credits: 1000,
  });

  const startSession = () => reportedSession(suite.service, suite.account, suite.identity);
  const scrape = async () =>
    (await suite.service.call('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();

  const call = {
    call_id: 'call_1',
    name: 'check_order',
    arguments: { order: 'A-1042' },
    result_excerpt: '{"status":"shipped"}',
    duration_ms: 240,
    outcome: 'ok',
  };
  const turn = (overrides: Record<string, unknown>) => ({
    type: 'transcript',
    language: 'en',
    interrupted: false,
    ended_at: null,
    ...overrides,
  });

  test('a tool turn keeps its call, an agent turn its documents; other turns show null', async () => {
    const session = await startSession();
    try {
      const reports = [
        turn({ turn_id: 'u1', role: 'user', text: 'Where is my order?', started_at: '2026-11-21T10:00:01.000Z' }),
        turn({
          turn_id: 't1',
          role: 'tool',
          text: '{"status":"shipped"}',
          language: null,
          tool_call: call,
          started_at: '2026-11-21T10:00:02.000Z',
          ended_at: '2026-11-21T10:00:02.240Z',
        }),
        turn({
          turn_id: 'a1',
          role: 'agent',
          text: 'It shipped yesterday.',
          document_ids: ['doc_returnsPolicy'],
          started_at: '2026-11-21T10:00:03.000Z',
        }),
        // A user turn claiming documents keeps none (they belong to agent turns).
        turn({
          turn_id: 'u2',
          role: 'user',
          text: 'Thanks!',
          document_ids: ['doc_x'],
          started_at: '2026-11-21T10:00:04.000Z',
        }),
      ];
      for (const body of reports) expect((await session.report(body)).status).toBe(200);
      expect((await session.report(reports[1])).status).toBe(200); // redelivered: stored once
      const { turns } = (await (await suite.account.call('GET', `/v1/sessions/${session.id}/transcript`)).json()) as {
        turns: Record<string, unknown>[];
      };
      expect(turns.map((t) => [t.role, t.tool_call, t.document_ids])).toEqual([
        ['user', null, null],
        ['tool', call, null],
        ['agent', null, ['doc_returnsPolicy']],
        ['user', null, null],
      ]);
      expect(turns[1]).toMatchObject({ role: 'tool', text: '{"status":"shipped"}', language: null });
      // A tool turn with a broken call is refused, as any malformed report.
      const broken = turn({
        turn_id: 't2',
        role: 'tool',
        text: '',
        tool_call: { ...call, outcome: 'maybe' },
        started_at: '2026-11-21T10:00:05.000Z',
      });
      expect((await session.report(broken)).status).toBe(422);
    } finally {
      await suite.account.call('POST', `/v1/sessions/${session.id}/end`);
    }
  });

  test("a turn's tool calls count once on /metrics by outcome, and in the session's metrics", async () => {
    const session = await startSession();
    try {
      const before = await scrape();
      const metricsReport = (turn_id: string, calls: { outcome: string; duration_ms: number }[]) => ({
        type: 'turn_metrics',
        turn_id,
        reply: true,
        voice_to_voice_ms: 1200,
        stages: { stt_ms: 100, eou_ms: 500, llm_ttft_ms: 300, tts_ttfb_ms: 150 },
        interrupted: false,
        tool_calls: calls.map((c) => ({ name: 'check_order', ...c })),
        providers: { stt: 'offline', llm: 'offline', tts: 'offline' },
        video: null,
      });
      const first = metricsReport('a1', [
        { outcome: 'ok', duration_ms: 240 },
        { outcome: 'timeout', duration_ms: 4_000 },
      ]);
      for (let i = 0; i < 3; i++) expect((await session.report(first)).status).toBe(200); // delivered thrice
      expect((await session.report(metricsReport('a2', [{ outcome: 'ok', duration_ms: 90 }]))).status).toBe(200);
      expect((await session.report(metricsReport('a3', []))).status).toBe(200);
      const after = await scrape();
      const delta = (series: string) => sample(after, series) - sample(before, series);
      expect(delta('likeness_tool_calls_total{outcome="ok"}')).toBe(2);
      expect(delta('likeness_tool_calls_total{outcome="timeout"}')).toBe(1);
      expect(delta('likeness_tool_calls_total{outcome="error"}')).toBe(0);
      expect(delta('likeness_tool_call_duration_seconds_count{outcome="ok"}')).toBe(2);
      expect(delta('likeness_tool_call_duration_seconds_sum{outcome="timeout"}')).toBeCloseTo(4, 5);
      const read = (await (await suite.account.call('GET', `/v1/sessions/${session.id}`)).json()) as {
        metrics: { tool_calls: number; turns: number };
      };
      expect(read.metrics).toMatchObject({ tool_calls: 3, turns: 3 });
    } finally {
      await suite.account.call('POST', `/v1/sessions/${session.id}/end`);
    }
  });

  test('an agent_ended report ends the session agent_ended', async () => {
    const session = await startSession();
    expect((await session.report({ type: 'agent_ended' })).status).toBe(200);
    const deadline = Date.now() + 10_000;
    let read: { status: string; end_reason: string | null } = { status: 'running', end_reason: null };
    while (Date.now() < deadline) {
      read = (await (await suite.account.call('GET', `/v1/sessions/${session.id}`)).json()) as typeof read;
      if (read.status === 'ended') break;
      await Bun.sleep(100);
    }
    expect(read).toMatchObject({ status: 'ended', end_reason: 'agent_ended' });
    // Its room is closed, and a second ending report finds it ended.
    expect(await suite.service.services.livekit.rooms.listRooms([session.id])).toHaveLength(0);
    expect((await session.report({ type: 'agent_ended' })).status).toBe(409);
  });
});
