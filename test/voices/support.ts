// Shared steps of the voice suites: reading an identity's stored voice and waiting for retrains.
import { eq } from 'drizzle-orm';
import { identities } from '../../src/identities/schema.ts';
import type { TestAccount, TestService } from '../support/service.ts';

export async function storedRow(service: TestService, identityId: string) {
  const [row] = await service.services.database.db.select().from(identities).where(eq(identities.id, identityId));
  return row;
}

export async function waitUntilReady(account: TestAccount, identityId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = (await (await account.call('GET', `/v1/identities/${identityId}/status`)).json()) as {
      status: string;
      detail: string | null;
    };
    if (body.status === 'ready') return body;
    if (Date.now() > deadline) throw new Error(`identity ${identityId} stayed ${body.status}`);
    await Bun.sleep(50);
  }
}
