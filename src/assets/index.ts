// Serves stored assets at /assets/<key>, to signed links that have not expired (links.ts).
// A missing, forged or expired link answers 404, as an unknown key does: a link tells nothing
// about what exists. One byte range (`Range: bytes=…`) answers 206 with just those bytes: a
// browser's <video> seeks in a recording that way (docs/api.md#recordings).
import { Elysia } from 'elysia';
import { ApiError } from '../http/errors.ts';
import type { AssetLinks } from './links.ts';
import { type AssetStore, assertSafeKey, contentTypeOf } from './store.ts';

export type { AssetLinks } from './links.ts';
export type { AssetStore } from './store.ts';

/**
 * The bytes a `Range` header asks for, inclusive, within `size`: undefined for a header this
 * route does not honour (not bytes, several ranges, malformed: the whole file answers, as
 * RFC 9110 allows), 'unsatisfiable' for a range past the end.
 */
export function byteRange(
  header: string | null,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  const [first, last] = [match[1]!, match[2]!];
  if (first === '') {
    // A suffix: the last N bytes.
    const length = Number(last);
    if (length === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  if (start >= size) return 'unsatisfiable';
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  return end < start ? undefined : { start, end };
}

export function assetRoutes(store: AssetStore, links: AssetLinks) {
  return new Elysia({ name: 'likeness/assets' }).get(
    '/assets/*',
    async ({ params, query, request }) => {
      const key = params['*'];
      try {
        assertSafeKey(key);
      } catch {
        throw new ApiError(404, 'Asset not found');
      }
      const left = links.secondsLeft(key, query.expires, query.signature);
      if (left === undefined) throw new ApiError(404, 'Asset not found');
      const stored = await store.open(key);
      if (!stored) throw new ApiError(404, 'Asset not found');
      const headers: Record<string, string> = {
        'content-type': contentTypeOf(key),
        // Nothing on the way keeps a person's face: a deleted identity's links end at once.
        'cache-control': 'private, no-store',
        'x-content-type-options': 'nosniff',
        'accept-ranges': 'bytes',
      };
      const { size } = stored;
      const range = byteRange(request.headers.get('range'), size);
      if (range === 'unsatisfiable')
        return new Response(null, { status: 416, headers: { ...headers, 'content-range': `bytes */${size}` } });
      // Streamed from the store as the client reads: a recording is not held in memory per request.
      if (!range)
        return new Response(stored.read(0, size), { headers: { ...headers, 'content-length': String(size) } });
      return new Response(stored.read(range.start, range.end + 1), {
        status: 206,
        headers: {
          ...headers,
          'content-range': `bytes ${range.start}-${range.end}/${size}`,
          'content-length': String(range.end + 1 - range.start),
        },
      });
    },
    { detail: { hide: true } },
  );
}
