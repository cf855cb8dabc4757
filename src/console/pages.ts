// The console's pages and the example web client, bundled by Bun from src/console/web and
// examples/web-client the first time one is asked for (bundling livekit-client takes a
// second; services that never serve a page never pay it), then served from memory.
import { Elysia } from 'elysia';
import { ApiError } from '../http/errors.ts';

type Asset = { body: Uint8Array | string; type: string };

let bundle: Promise<Map<string, Asset>> | undefined;

function frontEnd(): Promise<Map<string, Asset>> {
  const building =
    bundle ??
    import('./web/build.ts')
      .then(({ buildFrontEnd }) => buildFrontEnd())
      .catch((error: unknown) => {
        bundle = undefined; // the next request tries again
        throw error;
      });
  bundle = building;
  return building;
}

/**
 * Pages load only their own scripts and styles; media and images may come from the asset
 * store and LiveKit, which can live on other hosts.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob: http: https:; media-src 'self' blob: http: https:; connect-src 'self' ws: wss: http: https:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

async function serve(path: string): Promise<Response> {
  const asset = (await frontEnd()).get(path);
  if (!asset) throw new ApiError(404, 'Not found');
  const html = asset.type.startsWith('text/html');
  return new Response(asset.body as BodyInit, {
    headers: {
      'content-type': asset.type,
      // Bundles change only with a new build of the service: pages revalidate, scripts may be cached briefly.
      'cache-control': html ? 'no-cache' : 'public, max-age=300',
      ...PAGE_HEADERS,
    },
  });
}

export function frontEndRoutes() {
  return new Elysia({ name: 'likeness/console-pages', detail: { hide: true } })
    // A newcomer opening the service's address lands in the console.
    .get('/', ({ set }) => {
      set.status = 302;
      set.headers['location'] = '/console';
    })
    .get('/console', () => serve('/console'))
    .get('/console/assets/:file', ({ params }) => serve(`/console/assets/${params.file}`))
    // Elysia routes a path with and without its trailing slash alike; the page links its files absolutely.
    .get('/examples/web-client', () => serve('/examples/web-client/'))
    .get('/examples/web-client/:file', ({ params }) => serve(`/examples/web-client/${params.file}`));
}
