// The service a suite (one describe block) shares: started by its beforeAll, stopped by its
// afterAll. Its fields are there once the beforeAll has run, so a test reads them, not a hook.
import { afterAll, beforeAll } from 'bun:test';
import {
  type Engine,
  startTestService,
  type TestAccount,
  type TestService,
  type TestServiceOptions,
} from './service.ts';

export interface SuiteService {
  readonly service: TestService;
}

export interface SuiteServiceWithAccount extends SuiteService {
  /** The account the suite's tests act as. */
  readonly account: TestAccount;
}

export function suiteService(engine: Engine, options: TestServiceOptions = {}): SuiteService {
  const suite = {} as { service: TestService };
  beforeAll(async () => {
    suite.service = await startTestService(engine, options);
  });
  afterAll(() => suite.service?.stop());
  return suite;
}

/** A suite's service and one account with `credits` (1000 unless said). */
export function suiteServiceWithAccount(
  engine: Engine,
  { credits = 1000, ...options }: TestServiceOptions & { credits?: number } = {},
): SuiteServiceWithAccount {
  const suite = {} as { service: TestService; account: TestAccount };
  beforeAll(async () => {
    suite.service = await startTestService(engine, options);
    suite.account = await suite.service.account({ credits });
  });
  afterAll(() => suite.service?.stop());
  return suite;
}
