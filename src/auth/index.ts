// Authentication of /v1 (spec §5): `Authorization: Bearer <key>` or `X-API-Key: <key>`.
// Resolves the caller's account; every query downstream is scoped by it.
import { Elysia } from 'elysia';
import type { Database } from '../db/index.ts';
import { ApiError } from '../http/errors.ts';
import { accountForKey } from './api-keys.ts';

export interface Caller {
  accountId: string;
  keyId: string;
}

function presentedKey(headers: Headers): string | undefined {
  const authorization = headers.get('authorization');
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1] ?? '';
  }
  return headers.get('x-api-key')?.trim() ?? undefined;
}

export function authentication(db: Database) {
  return new Elysia({ name: 'likeness/auth' }).derive({ as: 'scoped' }, async ({ request }): Promise<{ caller: Caller }> => {
    const key = presentedKey(request.headers);
    if (key === undefined) throw new ApiError(401, 'Missing API key: send Authorization: Bearer <key> or X-API-Key');
    const found = await accountForKey(db, key);
    if (!found) throw new ApiError(401, 'Invalid or revoked API key');
    return { caller: found };
  });
}
