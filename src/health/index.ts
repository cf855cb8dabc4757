// Liveness (the process answers) and readiness (docs/api.md#health): its dependencies answer,
// and it is warm, so the first request after a start costs what the hundredth does. Each check
// is cached for a moment: an orchestrator, or a burst of probes, never turns readiness into
// load on the database or LiveKit.
import { Elysia } from 'elysia';

export type ReadinessCheck = () => Promise<void>;

/** How long one check's answer stands. */
const CHECK_TTL_MS = 2_000;

/** The named checks /readyz runs; more can be added after the routes are built (the worker beside the API, say). */
export class Readiness {
  readonly #checks = new Map<string, ReadinessCheck>();
  readonly #cached = new Map<string, { at: number; result: Promise<string> }>();

  constructor(checks: Record<string, ReadinessCheck> = {}) {
    for (const [name, check] of Object.entries(checks)) this.add(name, check);
  }

  add(name: string, check: ReadinessCheck): void {
    this.#checks.set(name, check);
    this.#cached.delete(name);
  }

  async results(now = performance.now()): Promise<Record<string, string>> {
    const entries = await Promise.all(
      [...this.#checks].map(async ([name, check]) => {
        let cached = this.#cached.get(name);
        if (!cached || now - cached.at > CHECK_TTL_MS) {
          cached = {
            at: now,
            result: check().then(
              () => 'ok',
              (error: unknown) => (error instanceof Error ? error.message : 'failed'),
            ),
          };
          this.#cached.set(name, cached);
        }
        return [name, await cached.result] as const;
      }),
    );
    return Object.fromEntries(entries);
  }
}

export function healthRoutes(readiness: Readiness) {
  return new Elysia({ name: 'likeness/health' })
    .get('/healthz', () => ({ status: 'ok' }), { detail: { hide: true } })
    .get(
      '/readyz',
      async ({ set }) => {
        const results = await readiness.results();
        const ready = Object.values(results).every((r) => r === 'ok');
        set.status = ready ? 200 : 503;
        return { status: ready ? 'ready' : 'not_ready', checks: results };
      },
      { detail: { hide: true } },
    );
}
