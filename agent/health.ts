// The worker's health and readiness for an orchestrator (AGENT_HEALTH_PORT, every interface):
// /healthz answers while the process runs; /readyz once the worker is registered and a job
// process is warm for each of its slots (a first session then waits no longer than the
// hundredth), until it starts to stop (draining), when it answers 503 so that nothing sends
// it more work.
import type { AgentWorker } from './worker.ts';

export interface WorkerHealth {
  url: string;
  stop(): void;
}

export function serveWorkerHealth(worker: AgentWorker, port: number): WorkerHealth {
  const server = Bun.serve({
    port,
    hostname: '0.0.0.0',
    fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === '/healthz') return Response.json({ status: 'ok' });
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
