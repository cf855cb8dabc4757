// The service a suite of visits shares, the agent worker in this process (visitor-service.ts):
// started by its beforeAll, which may take two minutes (the worker's first load), stopped by its
// afterAll. Its fields are there once the beforeAll has run, so a test reads them, not a hook.
import { afterAll, beforeAll } from 'bun:test';
import type { Engine } from './service.ts';
import type { SuiteServiceWithAccount } from './suite-service.ts';
import { startAgentService, startVisitorService, type VisitorService } from './visitor-service.ts';

const START_TIMEOUT_MS = 120_000;

function suiteOf(start: () => Promise<VisitorService>): SuiteServiceWithAccount {
  const suite = {} as VisitorService;
  beforeAll(async () => {
    Object.assign(suite, await start());
  }, START_TIMEOUT_MS);
  afterAll(() => suite.service?.stop());
  return suite;
}

/** startAgentService's service and account, for one suite. */
export function suiteAgentService(
  engine: Engine,
  env: Record<string, string>,
  credits: number,
): SuiteServiceWithAccount {
  return suiteOf(() => startAgentService(engine, env, credits));
}

/** startVisitorService's service (on the provider fakes) and account, for one suite. */
export function suiteVisitorService(
  env: Record<string, string> = {},
  options: Parameters<typeof startVisitorService>[1] = {},
): SuiteServiceWithAccount {
  return suiteOf(() => startVisitorService(env, options));
}
