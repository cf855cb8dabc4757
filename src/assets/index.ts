// Serves stored assets at /assets/<key>, to signed links that have not expired (links.ts).
// A missing, forged or expired link answers 404, as an unknown key does: a link tells nothing
// about what exists.
import { Elysia } from 'elysia';
import { ApiError } from '../http/errors.ts';
import type { AssetLinks } from './links.ts';
import { type AssetStore, assertSafeKey, contentTypeOf } from './store.ts';

export function assetRoutes(store: AssetStore, links: AssetLinks) {
  return new Elysia({ name: 'likeness/assets' }).get(
    '/assets/*',
    async ({ params, query }) => {
      const key = params['*'];
      try {
        assertSafeKey(key);
      } catch {
        throw new ApiError(404, 'Asset not found');
      }
      const left = links.secondsLeft(key, query.expires, query.signature);
      if (left === undefined) throw new ApiError(404, 'Asset not found');
      const blob = await store.get(key);
      if (!blob) throw new ApiError(404, 'Asset not found');
      return new Response(blob, {
        headers: {
          'content-type': contentTypeOf(key),
          // Nothing on the way keeps a person's face: a deleted identity's links end at once.
          'cache-control': 'private, no-store',
          'x-content-type-options': 'nosniff',
        },
      });
    },
    { detail: { hide: true } },
  );
}
