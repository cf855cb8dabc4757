// /internal/admin: the operator CLI's way in while the service holds the embedded database.
// Guarded by the admin token (ADMIN_TOKEN, or the one generated into DATA_DIR).
import { timingSafeEqual } from 'node:crypto';
import { Elysia, t } from 'elysia';
import { bearerToken, type InternalDoor } from '../auth/index.ts';
import { ApiError } from '../http/errors.ts';
import { type Operations, OperatorError } from './operations.ts';

export { databaseOperations, type Operations, OperatorError } from './operations.ts';
export { adminTokenFor, runningService } from './service-record.ts';

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const run = async <T>(action: () => Promise<T>): Promise<T> => {
  try {
    return await action();
  } catch (error) {
    if (error instanceof OperatorError) throw new ApiError(error.status, error.message);
    throw error;
  }
};

function checkAdminToken(request: Request, adminToken: string): void {
  const presented = bearerToken(request);
  if (!presented || !sameSecret(presented, adminToken)) throw new ApiError(401, 'Invalid admin token');
}

/** The admin API's callers, checked before a body is read (src/auth/internal-doors.ts); its bodies are a few fields. */
export function adminDoor(adminToken: string): InternalDoor {
  return {
    matches: (path) => path.startsWith('/internal/admin/'),
    maxBodyBytes: 64 * 1024,
    admit: async (request) => checkAdminToken(request, adminToken),
  };
}

export function adminRoutes(operations: Operations, adminToken: string) {
  const AccountRef = t.Object({ account_id: t.String() });
  return new Elysia({ prefix: '/internal/admin', detail: { hide: true } })
    .onBeforeHandle(({ request }) => checkAdminToken(request, adminToken))
    .post('/accounts', ({ body }) => run(() => operations.createAccount(body)), {
      body: t.Object({ email: t.String(), credits: t.Optional(t.Integer()) }),
    })
    .post('/keys', ({ body }) => run(() => operations.createKey(body)), {
      body: t.Object({ account_id: t.String(), name: t.Optional(t.String()), test: t.Optional(t.Boolean()) }),
    })
    .get('/keys', ({ query }) => run(() => operations.listKeys(query)), { query: AccountRef })
    .post('/keys/revoke', ({ body }) => run(() => operations.revokeKey(body)), {
      body: t.Object({ account_id: t.String(), key_id: t.String() }),
    })
    .post('/credits/grant', ({ body }) => run(() => operations.grantCredits(body)), {
      body: t.Object({ account_id: t.String(), amount: t.Integer() }),
    })
    .get('/credits/balance', ({ query }) => run(() => operations.balance(query)), { query: AccountRef })
    .post('/console-password', ({ body }) => run(() => operations.setConsolePassword(body)), {
      body: t.Object({ account_id: t.String(), password: t.String() }),
    })
    .post('/limits', ({ body }) => run(() => operations.setLimits(body)), {
      body: t.Object({
        account_id: t.String(),
        limits: t.Record(t.String(), t.Integer()),
        reset: t.Optional(t.Boolean()),
      }),
    })
    .get('/limits', ({ query }) => run(() => operations.showLimits(query)), { query: AccountRef });
}
