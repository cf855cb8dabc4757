// OpenAPI 3.1 at /openapi.json, generated from the route schemas that validate requests,
// and a Swagger UI page at /docs served from our own node_modules (no CDN at run time).
import { dirname, join } from 'node:path';
import { openapi } from '@elysiajs/openapi';
import { Elysia } from 'elysia';
import { withExamples } from './examples.ts';

const swaggerDir = dirname(Bun.resolveSync('swagger-ui-dist/package.json', import.meta.dir));

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Likeness API</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui' });</script>
</body></html>`;

/**
 * Fixes to Elysia's generated document, so that validators, schemathesis and generated
 * clients read it. Elysia's generator writes a body-less response (`t.Void()`, the 204s) as `content: {type:
 * "void"}`, which is not a media-type map: validators and schemathesis stop on it. A 204 has
 * no content at all.
 */
function withoutVoidContent(document: {
  paths?: Record<string, Record<string, { responses?: Record<string, { content?: unknown }> }>>;
}) {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        if ((response.content as { type?: unknown } | undefined)?.type === 'void') delete response.content;
      }
    }
  }
  return document;
}

/**
 * A string answer that is a document of its own type (the captions' `text/vtt`) says so in its
 * schema's `contentMediaType`; Elysia's generator files every string answer under `text/plain`.
 */
function stringsUnderTheirMediaType(document: {
  paths?: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>>;
}) {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        const plain = response.content?.['text/plain'] as { schema?: { contentMediaType?: unknown } } | undefined;
        const type = plain?.schema?.contentMediaType;
        if (typeof type === 'string' && response.content) response.content = { [type]: plain! };
      }
    }
  }
}

type Schema = { anyOf?: Schema[]; type?: string; format?: string; [key: string]: unknown };

/**
 * Elysia writes every integer as `anyOf: [{type: string, format: integer, default: 0}, {type:
 * integer}]` (it coerces numeric strings), in responses too. The string branch's default is
 * not a string, which validators refuse, and no response carries an integer as a string: each
 * such union becomes its integer (or number) branch, with the outer keywords kept.
 */
function numbersAsNumbers(node: unknown): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) numbersAsNumbers(item);
    return;
  }
  const schema = node as Schema;
  const branches = schema.anyOf;
  if (branches?.length === 2) {
    const numeric = branches.find((b) => b.type === 'integer' || b.type === 'number');
    const asString = branches.find((b) => b.type === 'string' && (b.format === 'integer' || b.format === 'number'));
    if (numeric && asString) {
      delete schema.anyOf;
      Object.assign(schema, numeric);
    }
  }
  for (const value of Object.values(schema)) numbersAsNumbers(value);
}

export function apiDocs(version: string) {
  return new Elysia({ name: 'likeness/openapi' })
    .onAfterHandle({ as: 'global' }, ({ request, response }) => {
      // Every request passes here: a string test before anything else.
      if (
        request.url.includes('/openapi.json') &&
        response &&
        typeof response === 'object' &&
        'paths' in response &&
        new URL(request.url).pathname === '/openapi.json'
      ) {
        numbersAsNumbers(response);
        stringsUnderTheirMediaType(response as Parameters<typeof stringsUnderTheirMediaType>[0]);
        withExamples(response as Parameters<typeof withExamples>[0]);
        return withoutVoidContent(response as Parameters<typeof withoutVoidContent>[0]);
      }
    })
    .use(
      openapi({
        path: '/docs',
        specPath: '/openapi.json',
        provider: null,
        // Dotted paths are not taken for static files: the captions are `captions.vtt`.
        exclude: {
          staticFile: false,
          paths: [/^\/internal\//, /^\/assets\//, '/docs', '/docs/*', '/healthz', '/readyz'],
        },
        documentation: {
          info: {
            title: 'Likeness API',
            version,
            description:
              'Digital humans: identities (avatars) and realtime conversation sessions, paid from one credit balance.',
          },
          components: {
            securitySchemes: {
              bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer lk_…' },
              apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
            },
          },
        },
      }),
    )
    .get('/docs', () => new Response(DOCS_PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } }), {
      detail: { hide: true },
    })
    .get(
      '/docs/:file',
      ({ params, status }) =>
        ['swagger-ui.css', 'swagger-ui-bundle.js'].includes(params.file)
          ? new Response(Bun.file(join(swaggerDir, params.file)))
          : status(404, { detail: 'Not found' }),
      { detail: { hide: true } },
    );
}
