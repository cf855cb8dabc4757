// Prometheus metrics of an API process (README "Metrics"), in prom-client's text
// format at GET /metrics. Two kinds:
// - events this process saw (requests, sessions started and ended, minutes and identities
//   charged, trainings, join → first frame, each agent turn's quality as its job reported
//   it): counters and histograms kept in memory, so
//   Prometheus sums them across API replicas as usual;
// - the fleet as the database sees it (running sessions, agent workers, their jobs and free
//   slots): gauges read at scrape time, the same on every replica (take max, not sum).

import { and, count, eq, gt, sql } from 'drizzle-orm';
import { Elysia } from 'elysia';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/index.ts';
import { ApiError } from '../http/errors.ts';
import type { FinishedRequest } from '../http/finished-requests.ts';
import { sessions } from '../sessions/schema.ts';
import { agentWorkers } from '../workers/schema.ts';

/** Every in-memory metric of this process; one registry however many services a process runs (tests run several). */
export const registry = new Registry();

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const httpRequests = new Counter({
  name: 'likeness_http_requests_total',
  help: 'HTTP requests answered, by route template, method and status.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpRequestSeconds = new Histogram({
  name: 'likeness_http_request_duration_seconds',
  help: 'Time from a request arriving to its response, by route template, method and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: SECONDS_BUCKETS,
  registers: [registry],
});

export const sessionsStarted = new Counter({
  name: 'likeness_sessions_started_total',
  help: 'Sessions started by this process, with or without an avatar.',
  labelNames: ['avatar'] as const,
  registers: [registry],
});

export const sessionsEnded = new Counter({
  name: 'likeness_sessions_ended_total',
  help: 'Sessions this process ended, by end reason.',
  labelNames: ['reason'] as const,
  registers: [registry],
});

export const eventLoopStallSeconds = new Histogram({
  name: 'likeness_event_loop_stall_seconds',
  help: "Pauses of this process's event loop longer than EVENT_LOOP_STALL_MS (the log names the requests they held).",
  buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60],
  registers: [registry],
});

export const firstFrameSeconds = new Histogram({
  name: 'likeness_session_first_frame_seconds',
  help: "From the visitor joining to the avatar's first frame (0 when the avatar was there first).",
  buckets: [0.25, 0.5, 1, 1.5, 2, 3, 5, 8, 13, 20, 30],
  registers: [registry],
});

/** Which kind of providers a turn ran on: every stage offline, every stage cloud, or some of each. */
export const PROVIDER_SETS = ['cloud', 'offline', 'mixed'] as const;
export type ProviderSet = (typeof PROVIDER_SETS)[number];

export const voiceToVoiceSeconds = new Histogram({
  name: 'likeness_turn_voice_to_voice_seconds',
  help: "An answered turn: the visitor stopped speaking → the agent's first audio, by provider set (cloud, offline, mixed).",
  labelNames: ['provider_set'] as const,
  buckets: [0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 8, 13],
  registers: [registry],
});

export const turnStageSeconds = new Histogram({
  name: 'likeness_turn_stage_seconds',
  help: "A turn's stage latencies by stage: stt (end of speech → final transcript), eou (→ turn judged over), llm (time to first token), tts (time to first audio).",
  labelNames: ['stage'] as const,
  buckets: [0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10],
  registers: [registry],
});

export const deliveredFps = new Histogram({
  name: 'likeness_avatar_delivered_fps',
  help: 'Frames per second the avatar published between two turns of a session (25 is its target).',
  buckets: [5, 10, 15, 18, 20, 22, 23, 24, 24.5, 25, 26, 30],
  registers: [registry],
});

export const turnInterruptions = new Counter({
  name: 'likeness_turn_interruptions_total',
  help: 'Agent turns the visitor cut off, by provider set.',
  labelNames: ['provider_set'] as const,
  registers: [registry],
});

/** The agent's tool calls, from its turn reports (a redelivered report counts once). */
export const toolCalls = new Counter({
  name: 'likeness_tool_calls_total',
  help: "Tools the agent called, by outcome (ok, error, timeout, invalid_arguments), from each turn's report.",
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const toolCallSeconds = new Histogram({
  name: 'likeness_tool_call_duration_seconds',
  help: 'How long a tool call took, as the agent measured it, by outcome.',
  labelNames: ['outcome'] as const,
  // A call waits at most TOOL_TIMEOUT_MAX_MS (10 s).
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15],
  registers: [registry],
});

export const trainingSeconds = new Histogram({
  name: 'likeness_identity_training_seconds',
  help: "An identity's training (create or retrain), by pipeline and outcome.",
  labelNames: ['pipeline', 'outcome'] as const,
  buckets: [0.25, 0.5, 1, 2, 5, 10, 20, 60, 120, 300],
  registers: [registry],
});

export const webhookAttempts = new Counter({
  name: 'likeness_webhook_attempts_total',
  help: "Customers' webhook delivery attempts by this process, by outcome (delivered, retrying, failed: the last retry failed).",
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const creditsCharged = new Counter({
  name: 'likeness_credits_charged_total',
  help: 'Credits charged by this process, by kind (onboarding: an identity; session_minute: a streamed minute; recorded_minute: its recording).',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const trainingUpgrades = new Counter({
  name: 'likeness_training_upgrades_total',
  help: "Background training upgrades by this process (identities trained again at their pipeline's current version), by outcome (upgraded; failed: retried later; superseded: the identity changed meanwhile).",
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Runs one training, timed under its pipeline and outcome. */
export async function timedTraining<T>(pipeline: string, train: () => Promise<T>): Promise<T> {
  const done = trainingSeconds.startTimer({ pipeline });
  try {
    const trained = await train();
    done({ outcome: 'trained' });
    return trained;
  } catch (error) {
    done({ outcome: 'failed' });
    throw error;
  }
}

/** Gauges of the fleet, read from the database when scraped (one registry per service: each has its own database). */
function fleetGauges(db: Database, agentName: string): { registry: Registry; refresh(): Promise<void> } {
  const registry = new Registry();
  const gauge = (name: string, help: string) => new Gauge({ name, help, registers: [registry] });
  const running = gauge('likeness_sessions_running', 'Sessions running now, fleet-wide (from the database).');
  const workers = gauge('likeness_agent_workers', 'Agent workers with a live heartbeat, fleet-wide.');
  const capacity = gauge('likeness_agent_capacity', 'Job slots of the live agent workers, fleet-wide.');
  const jobs = gauge('likeness_agent_jobs_running', 'Jobs the live agent workers run, fleet-wide.');
  const free = gauge(
    'likeness_agent_slots_free',
    'Free job slots of the live agent workers that are not draining, fleet-wide.',
  );
  return {
    registry,
    async refresh() {
      const [sessionCount] = await db.select({ n: count() }).from(sessions).where(eq(sessions.status, 'running'));
      const [fleet] = await db
        .select({
          n: count(),
          capacity: sql<number>`coalesce(sum(${agentWorkers.capacity}), 0)::int`,
          jobs: sql<number>`coalesce(sum(${agentWorkers.runningJobs}), 0)::int`,
          free: sql<number>`coalesce(sum(greatest(${agentWorkers.capacity} - ${agentWorkers.runningJobs}, 0)) filter (where not ${agentWorkers.draining}), 0)::int`,
        })
        .from(agentWorkers)
        .where(and(eq(agentWorkers.agentName, agentName), gt(agentWorkers.expiresAt, sql`now()`)));
      running.set(Number(sessionCount?.n ?? 0));
      workers.set(Number(fleet?.n ?? 0));
      capacity.set(Number(fleet?.capacity ?? 0));
      jobs.set(Number(fleet?.jobs ?? 0));
      free.set(Number(fleet?.free ?? 0));
    },
  };
}

/** Counts and times a request by its route template: bounded label values, never a concrete path. */
export function countRequest({ method, route, status, seconds }: FinishedRequest): void {
  const labels = { method, route, status: String(status) };
  httpRequests.inc(labels);
  httpRequestSeconds.observe(labels, seconds);
}

/**
 * GET /metrics, for a bearer of METRICS_TOKEN or the admin token (401 otherwise): the
 * figures say how much the service is used, which is an operator's to see.
 */
export function metricsRoutes({ db, agentName, tokens }: { db: Database; agentName: string; tokens: string[] }) {
  const fleet = fleetGauges(db, agentName);
  const accepted = new Set(tokens.filter(Boolean).map((t) => `Bearer ${t}`));
  return new Elysia({ name: 'likeness/metrics' }).get(
    '/metrics',
    async ({ request }) => {
      if (!accepted.has(request.headers.get('authorization') ?? ''))
        throw new ApiError(401, 'Metrics need METRICS_TOKEN or the admin token as a bearer token');
      await fleet.refresh();
      const merged = Registry.merge([registry, fleet.registry]);
      return new Response(await merged.metrics(), {
        headers: { 'content-type': merged.contentType, 'cache-control': 'no-store' },
      });
    },
    { detail: { hide: true } },
  );
}
