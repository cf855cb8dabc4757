// Serves stored assets at /assets/<key>. Keys hold a 128-bit random token, so an
// address is as private as the identity's owner keeps it (like a signed URL without expiry).
import { Elysia } from 'elysia';
import { ApiError } from '../http/errors.ts';
import { assertSafeKey, contentTypeOf, type AssetStore } from './index.ts';

export function assetRoutes(store: AssetStore) {
  return new Elysia({ name: 'likeness/assets' }).get(
    '/assets/*',
    async ({ params }) => {
      const key = params['*'];
      try {
        assertSafeKey(key);
      } catch {
        throw new ApiError(404, 'Asset not found');
      }
      const blob = await store.get(key);
      if (!blob) throw new ApiError(404, 'Asset not found');
      return new Response(blob, {
        headers: {
          'content-type': contentTypeOf(key),
          // Keys are never reused: a retrain writes under a new token.
          'cache-control': 'private, max-age=31536000, immutable',
          'x-content-type-options': 'nosniff',
        },
      });
    },
    { detail: { hide: true } },
  );
}
