// The embed's pages (docs/api.md#embed): /embed.js (defines <likeness-avatar>), its LiveKit
// chunk /embed/livekit.js, and /embed/frame, the iframe form. Scripts are bundled on the first
// request (or by warmEmbed at start), gzipped once and served from memory to any origin: a
// page anywhere may load them; what it may start is the publishable key's business.
import { createHash } from 'node:crypto';
import { Elysia, t } from 'elysia';

export interface EmbedPageDeps {
  /** The key's allowed origins; undefined when no live key has that value. */
  allowedOrigins(key: string): Promise<string[] | undefined>;
}

interface Script {
  body: string;
  gzipped: Uint8Array;
}

interface Scripts {
  element: Script;
  chunk: Script;
  chunkVersion: string;
}

let building: Promise<Scripts> | undefined;

function scripts(): Promise<Scripts> {
  building ??= import('./web/build.ts')
    .then(({ buildEmbed }) => buildEmbed())
    .then(({ script, chunk, chunkVersion }) => ({
      element: { body: script, gzipped: Bun.gzipSync(script) },
      chunk: { body: chunk, gzipped: Bun.gzipSync(chunk) },
      chunkVersion,
    }))
    .catch((error: unknown) => {
      building = undefined; // the next request tries again
      throw error;
    });
  return building;
}

/** Bundles the scripts now (at start) rather than on the first visitor's request. */
export async function warmEmbed(): Promise<void> {
  await scripts();
}

/** Sizes in bytes, as served (the README quotes them). */
export async function embedSizes(): Promise<Record<'element' | 'chunk', { raw: number; gzipped: number }>> {
  const { element, chunk } = await scripts();
  const size = (script: Script) => ({ raw: Buffer.byteLength(script.body), gzipped: script.gzipped.length });
  return { element: size(element), chunk: size(chunk) };
}

function acceptsGzip(request: Request): boolean {
  return /\bgzip\b(?!\s*;\s*q=0(\.0*)?\s*(,|$))/.test(request.headers.get('accept-encoding') ?? '');
}

function serveScript(script: Script, request: Request, cacheControl: string): Response {
  const gzip = acceptsGzip(request);
  return new Response(gzip ? (script.gzipped as BodyInit) : script.body, {
    headers: {
      'content-type': 'text/javascript; charset=utf-8',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      vary: 'accept-encoding',
      'cache-control': cacheControl,
      // Any site may load them (a module import from another origin needs CORS), also under COEP.
      'access-control-allow-origin': '*',
      'cross-origin-resource-policy': 'cross-origin',
      'x-content-type-options': 'nosniff',
    },
  });
}

/** The frame's only inline style, allowed by its hash (the page allows no other inline code). */
const FRAME_STYLE = 'html,body{margin:0;height:100%;background:transparent}';
const FRAME_STYLE_HASH = `'sha256-${createHash('sha256').update(FRAME_STYLE).digest('base64')}'`;

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!,
  );
}

/** Only exact origins reach the policy: a stray space or semicolon would change its meaning. */
function frameAncestors(origins: string[]): string {
  const exact = origins.filter((origin) => {
    if (!/^https?:\/\/[^\s;,'"]+$/.test(origin)) return false;
    try {
      return new URL(origin).origin === origin;
    } catch {
      return false;
    }
  });
  return exact.length ? exact.join(' ') : "'none'";
}

function frameHeaders(ancestors: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    // No X-Frame-Options: frame-ancestors says who may show it. LiveKit (connect-src) may be another host.
    'content-security-policy': [
      "default-src 'none'",
      "script-src 'self'",
      `style-src ${FRAME_STYLE_HASH}`,
      "img-src 'self' data: blob:",
      "media-src 'self' blob: mediastream:",
      "connect-src 'self' ws: wss: http: https:",
      `frame-ancestors ${ancestors}`,
      "base-uri 'none'",
      "form-action 'none'",
    ].join('; '),
  };
}

function framePage(body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Likeness avatar</title>
<style>${FRAME_STYLE}</style>
<script src="../embed.js"></script>
</head>
<body>${body}</body>
</html>
`;
}

const NOT_FOUND_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Likeness avatar: unknown key</title></head>
<body><p>This avatar’s publishable key is unknown or revoked.</p></body>
</html>
`;

const FrameQuery = t.Object({
  key: t.String({ minLength: 1, maxLength: 200, description: 'The publishable key (`lk_pub_…`).' }),
  identity: t.String({ minLength: 1, maxLength: 100, description: 'The identity to start (`idn_…`).' }),
  'form-factor': t.Optional(t.Union([t.Literal('phone'), t.Literal('desktop')])),
  language: t.Optional(t.String({ minLength: 1, maxLength: 16 })),
  'visitor-token': t.Optional(t.String({ minLength: 1, maxLength: 2_000 })),
});

const ChunkQuery = t.Object({ v: t.Optional(t.String({ maxLength: 64 })) });

export function embedPageRoutes(deps: EmbedPageDeps) {
  return new Elysia({ name: 'likeness/embed-pages', detail: { hide: true } })
    .get('/embed.js', async ({ request }) =>
      // Short: a new service build reaches pages within minutes; the chunk it names is versioned.
      serveScript((await scripts()).element, request, 'public, max-age=300'),
    )
    .get(
      '/embed/livekit.js',
      async ({ request, query }) => {
        const { chunk, chunkVersion } = await scripts();
        const current = query.v === chunkVersion;
        return serveScript(chunk, request, current ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
      },
      { query: ChunkQuery },
    )
    .get(
      '/embed/frame',
      async ({ query }) => {
        const origins = await deps.allowedOrigins(query.key);
        if (!origins) {
          // Any page may show this one: it tells the site's developer what is wrong.
          return new Response(NOT_FOUND_PAGE, {
            status: 404,
            headers: { ...frameHeaders('*'), 'content-security-policy': "default-src 'none'" },
          });
        }
        const attributes = [
          'frame',
          `publishable-key="${escapeHtml(query.key)}"`,
          `identity="${escapeHtml(query.identity)}"`,
          ...(query['form-factor'] ? [`form-factor="${query['form-factor']}"`] : []),
          ...(query.language ? [`language="${escapeHtml(query.language)}"`] : []),
          ...(query['visitor-token'] ? [`visitor-token="${escapeHtml(query['visitor-token'])}"`] : []),
        ].join(' ');
        return new Response(framePage(`<likeness-avatar ${attributes}></likeness-avatar>`), {
          headers: frameHeaders(frameAncestors(origins)),
        });
      },
      { query: FrameQuery },
    );
}
