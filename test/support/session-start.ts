// The two calls most session suites begin with, as a client makes them: an identity created
// from identityForm's defaults and `fields`, and POST /v1/sessions/start with a JSON body; and
// what a refused start must not leave behind.
import { eq } from 'drizzle-orm';
import { sessions } from '../../src/sessions/schema.ts';
import { type FormFields, type IdentityBody, identityForm } from './forms.ts';
import type { TestAccount, TestService } from './service.ts';

/** The identity `account` created; nothing is checked here (a suite that checks the answer calls the route itself). */
export async function createIdentity(
  account: Pick<TestAccount, 'call'>,
  fields: FormFields = {},
): Promise<IdentityBody> {
  const response = await account.call('POST', '/v1/identities', { body: await identityForm(fields) });
  return (await response.json()) as IdentityBody;
}

/** POST /v1/sessions/start with `body` as JSON: the answer as the API gives it, for the suite to check. */
export function postSessionStart(account: Pick<TestAccount, 'call'>, body: Record<string, unknown>): Promise<Response> {
  return account.call('POST', '/v1/sessions/start', {
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
}

/** How many session rows the account has (a refused start adds none). */
export async function sessionRowCount(service: TestService, accountId: string): Promise<number> {
  return (
    await service.services.database.db
      .select({ id: sessions.id })
      .from(sessions)
      .where(eq(sessions.accountId, accountId))
  ).length;
}

/**
 * POST /v1/sessions/start as a client that honours a 503 (`Retry-After`): tried again until the
 * answer is not 503 or `timeoutMs` passed. A worker's jobs go on a moment after their session
 * ended (their last reports, their process's end), so a start right after another found its
 * two slots held (runs 90, 92). For suites whose point is not admission (test/sessions/admission
 * is); a refused start leaves nothing behind, so trying again is safe.
 */
export async function startWhenAdmitted(
  account: Pick<TestAccount, 'call'>,
  body: Record<string, unknown>,
  timeoutMs = 30_000,
): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await postSessionStart(account, body);
    if (response.status !== 503 || Date.now() > deadline) return response;
    await Bun.sleep(250);
  }
}
