// Shared steps of the voice suites: reading an identity's stored voice and waiting for retrains.
import { afterAll, beforeAll } from 'bun:test';
import { eq } from 'drizzle-orm';
import { identities } from '../../src/identities/schema.ts';
import { type FakeElevenLabs, startFakeElevenLabs } from '../support/fakes/elevenlabs.ts';
import {
  type Engine,
  startTestService,
  type TestAccount,
  type TestService,
  type TestServiceOptions,
} from '../support/service.ts';

export interface ElevenLabsSuite {
  readonly fake: FakeElevenLabs;
  readonly service: TestService;
  /** The account the suite's tests act as, with 100,000 credits. */
  readonly account: TestAccount;
}

/**
 * A suite's wire-level ElevenLabs fake and a service that clones voices there (with `options`,
 * its `env` added), started by its beforeAll and stopped by its afterAll.
 */
export function suiteWithElevenLabs(engine: Engine, { env, ...options }: TestServiceOptions): ElevenLabsSuite {
  const suite = {} as { fake: FakeElevenLabs; service: TestService; account: TestAccount };
  beforeAll(async () => {
    suite.fake = await startFakeElevenLabs();
    suite.service = await startTestService(engine, {
      ...options,
      env: { ELEVENLABS_API_KEY: 'xi-secret', ELEVENLABS_BASE_URL: suite.fake.baseUrl, ...env },
    });
    suite.account = await suite.service.account({ credits: 100_000 });
  });
  afterAll(async () => {
    await suite.service?.stop();
    await suite.fake?.stop();
  });
  return suite;
}

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
