// A bench's account on the service: the key's header, a POST made with it, and an identity
// created with it, as every bench that starts sessions needs before its first figure.
import type { RunningService } from '../../src/server.ts';
import { type FormFields, identityForm } from '../../test/support/forms.ts';

export interface BenchAccount {
  /** `Bearer <api key>`. */
  authorization: string;
  /** POST to the API as the account; a `body` goes as JSON. */
  post(path: string, body?: unknown): Promise<Response>;
  /** A new identity from identityForm(`fields`), English unless they say; its id. Throws unless created. */
  createIdentity(fields?: FormFields): Promise<string>;
}

/** An account made through the service's operations, with credits enough for any bench. */
export async function createBenchAccount(
  service: RunningService,
  email = 'bench@example.com',
): Promise<BenchAccount & { accountId: string }> {
  const account = await service.services.operations.createAccount({ email, credits: 10_000_000 });
  return { ...benchAccount(service.url, account.api_key), accountId: account.account_id };
}

/** An account made already (its `apiKey`), calling the API at `url`. */
export function benchAccount(url: string, apiKey: string): BenchAccount {
  const authorization = `Bearer ${apiKey}`;
  return {
    authorization,
    post: (path, body) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: body === undefined ? { authorization } : { authorization, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    async createIdentity(fields = {}) {
      const created = await fetch(`${url}/v1/identities`, {
        method: 'POST',
        headers: { authorization },
        body: await identityForm({ language: 'en', ...fields }),
      });
      if (created.status !== 200)
        throw new Error(`identity create answered ${created.status}: ${await created.text()}`);
      return ((await created.json()) as { identity_id: string }).identity_id;
    },
  };
}
