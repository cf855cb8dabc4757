// Liveness (the process answers) and readiness (its dependencies answer).
import { Elysia } from 'elysia';

export type ReadinessCheck = () => Promise<void>;

export function healthRoutes(checks: Record<string, ReadinessCheck>) {
  return new Elysia({ name: 'likeness/health' })
    .get('/healthz', () => ({ status: 'ok' }), { detail: { hide: true } })
    .get(
      '/readyz',
      async ({ set }) => {
        const results: Record<string, string> = {};
        await Promise.all(
          Object.entries(checks).map(async ([name, check]) => {
            try {
              await check();
              results[name] = 'ok';
            } catch (error) {
              results[name] = error instanceof Error ? error.message : 'failed';
            }
          }),
        );
        const ready = Object.values(results).every((r) => r === 'ok');
        set.status = ready ? 200 : 503;
        return { status: ready ? 'ready' : 'not_ready', checks: results };
      },
      { detail: { hide: true } },
    );
}
