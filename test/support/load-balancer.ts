// A load balancer in front of several API processes, as a deployment has one (Caddy in
// deploy/compose.yaml, lb_try_duration): round robin over the backends, the next one tried when
// a backend does not answer, so a killed API process costs nothing. It counts what each backend received,
// for tests that show traffic reached both.
export interface LoadBalancer {
  url: string;
  /** Requests each backend answered, by backend and path prefix (`/internal/livekit/webhook`, `/internal/sessions`, …). */
  received: Map<string, Map<string, number>>;
  stop(): void;
}

const COUNTED = ['/internal/livekit/webhook', '/internal/sessions', '/internal/workers/heartbeat', '/v1/sessions'];

export function startLoadBalancer(backends: string[]): LoadBalancer {
  const received = new Map<string, Map<string, number>>(backends.map((b) => [b, new Map()]));
  let next = 0;
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url);
      const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
      const failures: string[] = [];
      // Each backend twice: a pooled connection the backend closed while idle fails once, then a new one works.
      for (let tried = 0; tried < 2 * backends.length; tried++) {
        const backend = backends[next++ % backends.length]!;
        try {
          const answer = await fetch(`${backend}${url.pathname}${url.search}`, {
            method: request.method,
            headers: request.headers,
            body,
            redirect: 'manual',
          });
          const path = COUNTED.find((prefix) => url.pathname.startsWith(prefix));
          if (path) received.get(backend)!.set(path, (received.get(backend)!.get(path) ?? 0) + 1);
          return new Response(answer.body, { status: answer.status, headers: answer.headers });
        } catch (error) {
          // a dead backend: the next one
          failures.push(`${backend}: ${(error as Error).message}`);
        }
      }
      return Response.json({ detail: `no backend answered (${failures.join('; ')})` }, { status: 502 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, received, stop: () => server.stop(true) };
}
