// GET /metrics (README.md#metrics), read by Prometheus' own text parser (the Python
// prometheus_client package the bootstrap installs): the API process's requests, sessions,
// trainings, charges and the fleet's slots, and the agent worker's on its health port. A real
// session (worker, LiveKit, a visitor who sees the avatar and asks a question the wire-faked
// cloud providers answer) moves the counters and histograms, the turn's quality among them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { TrackKind } from '@livekit/rtc-node';
import { serveWorkerHealth, type WorkerHealth } from '../../agent/health.ts';
import { createAstronaut, FrameLog, startSession } from '../avatar/support.ts';
import { noFaceJpeg } from '../fixtures/index.ts';
import { file, identityForm } from '../support/forms.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import type { TestAccount, TestService } from '../support/service.ts';
import { eventually, joinAsVisitor } from '../support/visitor.ts';
import { startVisitorService } from '../support/visitor-service.ts';
import { Listener, Microphone, speech } from '../support/voice.ts';

const fakes = sharedProviderFakes();
const METRICS_TOKEN = 'metrics-test-token';
const ONBOARDING = 50;
const PER_MINUTE = 10;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Family {
  name: string;
  type: string;
  samples: Sample[];
}

const PARSE = `
import sys, json
from prometheus_client.parser import text_string_to_metric_families
families = [{"name": f.name, "type": f.type, "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]} for f in text_string_to_metric_families(sys.stdin.read())]
print(json.dumps(families))
`;

/** The exposition as Prometheus' parser reads it; it throws on anything malformed. */
async function parse(text: string): Promise<Family[]> {
  const python = Bun.spawn([process.env.LIKENESS_TEST_PYTHON ?? 'python3', '-c', PARSE], {
    stdin: new TextEncoder().encode(text),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([
    new Response(python.stdout).text(),
    new Response(python.stderr).text(),
    python.exited,
  ]);
  if (code !== 0) throw new Error(`prometheus_client could not parse the exposition: ${err}`);
  return JSON.parse(out) as Family[];
}

/** The sum of the samples named `name` whose labels include `labels` (0 when there is none). */
function value(families: Family[], name: string, labels: Record<string, string> = {}): number {
  return families
    .flatMap((f) => f.samples)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

let service: TestService;
let account: TestAccount;
let health: WorkerHealth;

beforeAll(async () => {
  ({ service, account } = await startVisitorService(
    {
      METRICS_TOKEN,
      CREDITS_ONBOARDING: String(ONBOARDING),
      CREDITS_PER_AVATAR_MINUTE: String(PER_MINUTE),
      BILLING_INTERVAL_SECONDS: '2',
    },
    { credits: 100_000 },
  ));
  health = serveWorkerHealth(service.worker!, 0);
}, 120_000);
afterAll(async () => {
  health?.stop();
  await service?.stop();
});

const scrape = async (token = METRICS_TOKEN) => {
  const answer = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toStartWith('text/plain; version=0.0.4');
  return parse(await answer.text());
};

describe('GET /metrics on the API port', () => {
  test('needs METRICS_TOKEN or the admin token: 401 in the error shape otherwise', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: `Bearer ${account.apiKey}` },
    ] as Record<string, string>[]) {
      const answer = await fetch(`${service.url}/metrics`, { headers });
      expect(answer.status).toBe(401);
      expect(((await answer.json()) as { detail: string }).detail).toContain('METRICS_TOKEN');
    }
    expect(value(await scrape(service.services.adminToken), 'likeness_agent_workers')).toBeGreaterThanOrEqual(0);
  });

  test('requests count by route template, method and status, with a duration histogram', async () => {
    const before = await scrape();
    const missing = await account.call('GET', '/v1/identities/idn_doesnotexist');
    expect(missing.status).toBe(404);
    await fetch(`${service.url}/no/such/path`);
    const after = await scrape();
    const route = { method: 'GET', route: '/v1/identities/:identity_id', status: '404' };
    expect(
      value(after, 'likeness_http_requests_total', route) - value(before, 'likeness_http_requests_total', route),
    ).toBe(1);
    expect(
      value(after, 'likeness_http_request_duration_seconds_count', route) -
        value(before, 'likeness_http_request_duration_seconds_count', route),
    ).toBe(1);
    // No concrete id in any label: the routes are templates.
    expect(JSON.stringify(after)).not.toContain('idn_doesnotexist');
    expect(value(after, 'likeness_http_requests_total', { route: 'unmatched', status: '404' })).toBeGreaterThan(
      value(before, 'likeness_http_requests_total', { route: 'unmatched', status: '404' }),
    );
    const histogram = after.find((f) => f.name === 'likeness_http_request_duration_seconds')!;
    expect(histogram.type).toBe('histogram');
  });

  test('a training, a session joined and ended: trainings, charges, sessions, first frame and the fleet move', async () => {
    const before = await scrape();
    const identity = await createAstronaut(account, { language: 'en' });
    const faceless = await account.call('POST', '/v1/identities', {
      body: await identityForm({ image: file(noFaceJpeg(), 'rocket.jpg', 'image/jpeg') }),
    });
    expect(faceless.status).toBe(422);
    const trained = await scrape();
    const delta = (now: Family[], name: string, labels: Record<string, string> = {}) =>
      value(now, name, labels) - value(before, name, labels);
    expect(
      delta(trained, 'likeness_identity_training_seconds_count', { pipeline: 'builtin', outcome: 'trained' }),
    ).toBe(1);
    expect(delta(trained, 'likeness_identity_training_seconds_count', { pipeline: 'builtin', outcome: 'failed' })).toBe(
      1,
    );
    expect(
      delta(trained, 'likeness_identity_training_seconds_sum', { pipeline: 'builtin', outcome: 'trained' }),
    ).toBeGreaterThan(0);
    expect(delta(trained, 'likeness_credits_charged_total', { kind: 'onboarding' })).toBe(ONBOARDING);

    const session = await startSession(account, { identity_id: identity.identity_id });
    let video: FrameLog | undefined;
    let ears: Listener | undefined;
    let microphone: Microphone | undefined;
    const joinedAt = performance.now();
    const visitor = await joinAsVisitor(session, {
      onTrack: (track) => {
        if (track.kind === TrackKind.KIND_VIDEO) video = new FrameLog(track);
        else ears = new Listener(track);
      },
    });
    try {
      await eventually(() => (video?.frames.length ?? 0) > 0, 30_000, 'the first avatar frame');
      // The job reports the first frame and the first minute; the workers' heartbeats carry the job.
      const running = await eventually(
        async () => {
          const now = await scrape();
          return delta(now, 'likeness_session_first_frame_seconds_count') === 1 &&
            value(now, 'likeness_agent_jobs_running') >= 1 &&
            delta(now, 'likeness_credits_charged_total', { kind: 'session_minute' }) >= PER_MINUTE
            ? now
            : undefined;
        },
        20_000,
        'first frame, a running job and a charged minute in /metrics',
      );
      expect(delta(running, 'likeness_sessions_started_total', { avatar: 'true' })).toBe(1);
      expect(value(running, 'likeness_sessions_running')).toBe(1);
      expect(value(running, 'likeness_agent_workers')).toBe(1);
      expect(value(running, 'likeness_agent_capacity')).toBe(service.worker!.capacity);
      expect(value(running, 'likeness_agent_slots_free')).toBe(service.worker!.capacity - 1);
      expect(delta(running, 'likeness_session_first_frame_seconds_sum')).toBeLessThan(30);

      const worker = await parse(await (await fetch(`${health.url}/metrics`)).text());
      expect(value(worker, 'likeness_worker_capacity')).toBe(service.worker!.capacity);
      expect(value(worker, 'likeness_worker_jobs_running')).toBe(1);
      expect(value(worker, 'likeness_worker_slots_free')).toBe(service.worker!.capacity - 1);
      expect(value(worker, 'likeness_worker_draining')).toBe(0);

      // A turn: the greeting, then the visitor's question answered; the job reports both turns' quality.
      fakes.openai.respond(() => 'It opens at nine.');
      microphone = await Microphone.publish(visitor.room);
      const greeting = await eventually(() => ears?.soundAfter(joinedAt), 30_000, 'the greeting');
      await eventually(() => ears!.silenceAfter(greeting, 400), 30_000, 'the end of the greeting');
      fakes.deepgram.script({ transcript: 'When does the museum open?', language: 'en' });
      const asked = await microphone.say(await speech('When does the museum open?'));
      await eventually(() => ears!.soundAfter(asked.endedAt), 30_000, 'the reply');
      const answered = await eventually(
        async () => {
          const now = await scrape();
          return delta(now, 'likeness_turn_voice_to_voice_seconds_count', { provider_set: 'cloud' }) >= 1
            ? now
            : undefined;
        },
        20_000,
        'the answered turn in /metrics',
      );
      expect(answered.find((f) => f.name === 'likeness_turn_voice_to_voice_seconds')!.type).toBe('histogram');
      const v2v = delta(answered, 'likeness_turn_voice_to_voice_seconds_sum', { provider_set: 'cloud' });
      expect(v2v).toBeGreaterThan(0);
      expect(v2v).toBeLessThan(20);
      expect(delta(answered, 'likeness_turn_voice_to_voice_seconds_count', { provider_set: 'offline' })).toBe(0);
      for (const stage of ['stt', 'eou', 'llm', 'tts'])
        expect({ stage, n: delta(answered, 'likeness_turn_stage_seconds_count', { stage }) >= 1 }).toEqual({
          stage,
          n: true,
        });
      // The greeting's report and the reply's each carry the frames published since the one before.
      const fpsCount = delta(answered, 'likeness_avatar_delivered_fps_count');
      expect(fpsCount).toBeGreaterThanOrEqual(1);
      const fps = delta(answered, 'likeness_avatar_delivered_fps_sum') / fpsCount;
      expect(fps).toBeGreaterThan(15);
      // The render rate (25), give or take a frame at a short window's edges: a frame late after
      // a stall and the next on time both land in one window (26.2 beside a CPU hog, run 113).
      expect(fps).toBeLessThanOrEqual(27.5);
      console.log(
        `metrics: a wire-faked cloud turn answered in ${Math.round(v2v * 1000)} ms voice-to-voice, the avatar at ${fps.toFixed(1)} fps`,
      );
      expect(answered.some((f) => f.name === 'likeness_turn_interruptions')).toBe(true);
      // The same turn in the session's own metrics (docs/api.md#session-metrics).
      const read = (await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as {
        metrics: { turns: number; voice_to_voice_ms: { p50: number }; providers: unknown };
      };
      expect(read.metrics.turns).toBe(1);
      expect(read.metrics.voice_to_voice_ms.p50).toBe(Math.round(v2v * 1000));
      expect(read.metrics.providers).toEqual({ stt: 'deepgram', llm: 'openai-compatible', tts: 'elevenlabs' });
    } finally {
      ears?.close();
      await microphone?.stop();
      video?.close();
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave();
    }
    const ended = await scrape();
    expect(delta(ended, 'likeness_sessions_ended_total', { reason: 'ended_by_api' })).toBe(1);
    expect(value(ended, 'likeness_sessions_running')).toBe(0);
    const { credits_charged } = (await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as {
      credits_charged: number;
    };
    expect(delta(ended, 'likeness_credits_charged_total', { kind: 'session_minute' })).toBe(credits_charged);
  }, 120_000);
});
