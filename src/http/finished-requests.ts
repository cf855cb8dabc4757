// What every answered request was, told once to whoever watches (the metrics, the access log):
// its route template, status, duration and ids, measured in one place.
import { Elysia } from 'elysia';

export interface FinishedRequest {
  method: string;
  /** The matched route's template (`/v1/identities/:identity_id`), or `unmatched`. */
  route: string;
  /** The path without its query (a query may carry a token or a link's signature). */
  path: string;
  status: number;
  seconds: number;
  requestId: string | undefined;
  accountId: string | undefined;
}

/** When each request arrived (a WeakMap: nothing to clean up when a request is dropped). */
const arrivals = new WeakMap<Request, number>();

export function finishedRequests(
  watchers: ((request: FinishedRequest) => void)[],
  accountOf: (request: Request) => string | undefined,
) {
  return new Elysia({ name: 'likeness/http/finished-requests' })
    .onRequest(({ request }) => void arrivals.set(request, performance.now()))
    .onAfterResponse({ as: 'global' }, ({ request, route, set, responseValue }) => {
      const began = arrivals.get(request) ?? performance.now();
      // An error's answer (404 for no route among them) is a Response the error handler made.
      const status =
        responseValue instanceof Response ? responseValue.status : typeof set.status === 'number' ? set.status : 200;
      const finished: FinishedRequest = {
        method: request.method,
        route: route || 'unmatched',
        path: new URL(request.url).pathname,
        status,
        seconds: (performance.now() - began) / 1000,
        requestId: set.headers['x-request-id'] as string | undefined,
        accountId: accountOf(request),
      };
      for (const watch of watchers) watch(finished);
    });
}
