// The app answers on two listeners: plain HTTP (PORT), and HTTPS (TLS_PORT, src/tls). Elysia
// knows only the first as its server, so the HTTPS listener notes each request it takes: a
// WebSocket upgrade must go through the server the request came in on, and a client that came
// in over HTTPS is given https and wss addresses (client-urls.ts).
import type { Server } from 'bun';

const secureArrivals = new WeakMap<Request, Server<unknown>>();

/** Called by the HTTPS listener for each request it takes. */
export function noteSecureArrival(request: Request, server: Server<unknown>): void {
  secureArrivals.set(request, server);
}

/** The HTTPS listener `request` came in on; undefined for the plain one. */
export function secureListenerOf(request: Request): Server<unknown> | undefined {
  return secureArrivals.get(request);
}
