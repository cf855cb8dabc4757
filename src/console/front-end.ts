// The console's pages and the example web client, bundled by Bun from src/console/web and
// examples/web-client the first time one is asked for (bundling livekit-client takes a
// second; services that never serve a page never pay it), then served from memory.
import { Elysia } from 'elysia';
import { ApiError } from '../http/errors.ts';

/** `gzipped` for scripts and styles: the console bundle (livekit-client inside) is 620 KB, 165 KB gzipped, on a phone's network. */
type Asset = { body: string; type: string; gzipped?: Uint8Array };

let bundle: Promise<Map<string, Asset>> | undefined;

function frontEnd(): Promise<Map<string, Asset>> {
  const building =
    bundle ??
    import('./web/build.ts')
      .then(({ buildFrontEnd }) => buildFrontEnd())
      .then((assets) => {
        // Pages are small and revalidated; scripts and styles are compressed once, here.
        for (const asset of assets.values()) {
          if (!asset.type.startsWith('text/html')) (asset as Asset).gzipped = Bun.gzipSync(asset.body);
        }
        return assets as Map<string, Asset>;
      })
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

/** Bundles the pages now (at start) rather than on the first visitor's request. */
export async function warmFrontEnd(): Promise<void> {
  await frontEnd();
}

async function serve(path: string, request: Request): Promise<Response> {
  const asset = (await frontEnd()).get(path);
  if (!asset) throw new ApiError(404, 'Not found');
  const html = asset.type.startsWith('text/html');
  const gzip =
    asset.gzipped && /\bgzip\b(?!\s*;\s*q=0(\.0*)?\s*(,|$))/.test(request.headers.get('accept-encoding') ?? '');
  return new Response(gzip ? (asset.gzipped as BodyInit) : asset.body, {
    headers: {
      'content-type': asset.type,
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      ...(asset.gzipped ? { vary: 'accept-encoding' } : {}),
      // Bundles change only with a new build of the service: pages revalidate, scripts may be cached briefly.
      'cache-control': html ? 'no-cache' : 'public, max-age=300',
      ...PAGE_HEADERS,
    },
  });
}

export function frontEndRoutes() {
  return (
    new Elysia({ name: 'likeness/console-pages', detail: { hide: true } })
      // A newcomer opening the service's address lands in the console.
      .get('/', ({ set }) => {
        set.status = 302;
        set.headers.location = '/console';
      })
      .get('/console', ({ request }) => serve('/console', request))
      .get('/console/assets/:file', ({ params, request }) => serve(`/console/assets/${params.file}`, request))
      // Elysia routes a path with and without its trailing slash alike; the page links its files absolutely.
      .get('/examples/web-client', ({ request }) => serve('/examples/web-client/', request))
      .get('/examples/web-client/:file', ({ params, request }) => serve(`/examples/web-client/${params.file}`, request))
  );
}
