// The API process's event loop, watched (issue 41): a timer due every TICK_MS that runs late by
// more than the threshold means the loop was held that long, by a handler or background work
// on it. Each such stall is counted (likeness_event_loop_stall_seconds) and logged with what the
// loop was doing: the requests in flight during it, by route and request id (none: background
// work). A request that held the loop has often answered before the late timer runs, so the
// recently finished ones are kept a moment to be named too.
import { Elysia } from 'elysia';
import { log } from '../logging/index.ts';
import { eventLoopStallSeconds } from '../metrics/index.ts';

const TICK_MS = 50;
/** Finished requests remembered for naming a stall that ended as they answered. */
const RECENT = 32;
/** Requests named in a stall's log line (the oldest first: the likeliest to have held it); the rest are counted. */
const NAMED = 10;

interface Activity {
  method: string;
  path: string;
  route?: string;
  requestId?: string;
  began: number;
  ended?: number;
}

export interface EventLoopStall {
  ms: number;
  /** How many requests were on the loop during the stall (a burst may hold hundreds). */
  in_flight: number;
  requests: { method: string; route: string; request_id: string | undefined }[];
}

export class EventLoopWatch {
  readonly #inFlight = new Map<Request, Activity>();
  readonly #recent: Activity[] = [];
  #timer: ReturnType<typeof setInterval> | undefined;

  /** `thresholdMs` 0: nothing is watched. `onStall`: besides the log and the metric (tests). */
  constructor(
    private readonly thresholdMs: number,
    private readonly onStall?: (stall: EventLoopStall) => void,
  ) {}

  start(): void {
    if (this.thresholdMs <= 0 || this.#timer) return;
    let due = performance.now() + TICK_MS;
    this.#timer = setInterval(() => {
      const now = performance.now();
      const lateMs = now - due;
      due = now + TICK_MS;
      if (lateMs > this.thresholdMs) this.#report(now - lateMs - TICK_MS, now, lateMs);
    }, TICK_MS);
    this.#timer.unref?.();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The Elysia plugin that tells the watch which requests are on the loop. */
  plugin() {
    return new Elysia({ name: 'likeness/health/event-loop' })
      .onRequest(({ request }) => {
        const { pathname } = new URL(request.url);
        this.#inFlight.set(request, { method: request.method, path: pathname, began: performance.now() });
      })
      .onBeforeHandle({ as: 'global' }, ({ request, route, set }) => {
        const activity = this.#inFlight.get(request);
        if (!activity) return;
        activity.route = route;
        activity.requestId = set.headers['x-request-id'] as string | undefined;
      })
      .onAfterResponse({ as: 'global' }, ({ request }) => {
        const activity = this.#inFlight.get(request);
        if (!activity) return;
        this.#inFlight.delete(request);
        activity.ended = performance.now();
        this.#recent.push(activity);
        if (this.#recent.length > RECENT) this.#recent.shift();
      });
  }

  #report(from: number, to: number, lateMs: number): void {
    const during = [...this.#inFlight.values(), ...this.#recent]
      .filter((a) => a.began <= to && (a.ended === undefined || a.ended >= from))
      .sort((a, b) => a.began - b.began);
    const stall: EventLoopStall = {
      ms: Math.round(lateMs),
      in_flight: during.length,
      requests: during
        .slice(0, NAMED)
        .map((a) => ({ method: a.method, route: a.route ?? a.path, request_id: a.requestId })),
    };
    eventLoopStallSeconds.observe(lateMs / 1000);
    log.warn(
      { stall_ms: stall.ms, in_flight: stall.in_flight, requests: stall.requests },
      stall.requests.length
        ? 'the event loop was held: requests waited'
        : 'the event loop was held by background work (no request in flight)',
    );
    this.onStall?.(stall);
  }
}
