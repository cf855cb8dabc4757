// The worker's health and readiness for an orchestrator (AGENT_HEALTH_PORT, every interface):
// /healthz answers while the process runs; /readyz once the worker is registered and a job
// process is warm for each of its slots (a first session then waits no longer than the
// hundredth), until it starts to stop (draining), when it answers 503 so that nothing sends
// it more work. /metrics: the worker's slots in Prometheus' text format; like the probes it
// is for the orchestrator's network only (the port is never published), so it takes no token.
import { Gauge, Registry } from 'prom-client';
import type { AgentWorker } from './worker.ts';

/** The worker's own gauges, read when scraped. */
function workerMetrics(worker: AgentWorker): Registry {
  const registry = new Registry();
  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value());
      },
    });
  gauge('likeness_worker_capacity', 'Job slots of this agent worker.', () => worker.capacity);
  gauge('likeness_worker_jobs_running', 'Sessions this agent worker runs now.', () => worker.runningSessions());
  gauge('likeness_worker_slots_free', 'Job slots free now (0 while draining).', () =>
    worker.stopping() ? 0 : Math.max(0, worker.capacity - worker.runningSessions()),
  );
  gauge('likeness_worker_warm_processes', 'Job processes started and waiting for a job.', () => worker.warmProcesses());
  gauge('likeness_worker_draining', '1 while the worker finishes its sessions before it stops.', () =>
    worker.stopping() ? 1 : 0,
  );
  return registry;
}

export interface WorkerHealth {
  url: string;
  stop(): void;
}

export function serveWorkerHealth(worker: AgentWorker, port: number): WorkerHealth {
  const metrics = workerMetrics(worker);
  const server = Bun.serve({
    port,
    hostname: '0.0.0.0',
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === '/healthz') return Response.json({ status: 'ok' });
      if (path === '/metrics')
        return new Response(await metrics.metrics(), { headers: { 'content-type': metrics.contentType } });
      if (path !== '/readyz') return Response.json({ detail: 'Not found' }, { status: 404 });
      const checks = {
        warm: worker.warmedUp() ? 'ok' : `${worker.warmProcesses()} of ${worker.capacity} job processes warm`,
        draining: worker.stopping() ? 'stopping' : 'ok',
      };
      const ready = Object.values(checks).every((check) => check === 'ok');
      return Response.json(
        { status: ready ? 'ready' : 'not_ready', checks, capacity: worker.capacity, running: worker.runningSessions() },
        { status: ready ? 200 : 503 },
      );
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}
