// The service a suite (one describe block) shares: started by its beforeAll, stopped by its
// afterAll. Its fields are there once the beforeAll has run, so a test reads them, not a hook.
import { afterAll, beforeAll } from 'bun:test';
import type { FormFields, IdentityBody } from './forms.ts';
import {
  type Engine,
  startTestService,
  type TestAccount,
  type TestService,
  type TestServiceOptions,
} from './service.ts';
import { createIdentity } from './session-start.ts';
import { LOOPBACK_WEBHOOKS_ENV, subscribedReceiver } from './webhook-subscription.ts';
import type { WebhookReceiver } from './webhooks.ts';

export interface SuiteService {
  readonly service: TestService;
}

export interface SuiteServiceWithAccount extends SuiteService {
  /** The account the suite's tests act as. */
  readonly account: TestAccount;
}

export interface SuiteServiceWithIdentity extends SuiteServiceWithAccount {
  /** The identity the account created in the beforeAll. */
  readonly identity: IdentityBody;
}

/** A suite's service; `startTimeout` (ms), where given, is its beforeAll's timeout. */
export interface SuiteServiceWithWebhooks extends SuiteServiceWithAccount {
  /** Where the account's webhook delivers (its /hooks), stopped by the suite's afterAll. */
  readonly receiver: WebhookReceiver;
  /** What the deliveries are signed with. */
  readonly secret: string;
}

export function suiteService(
  engine: Engine,
  { startTimeout, ...options }: TestServiceOptions & { startTimeout?: number } = {},
): SuiteService {
  const suite = {} as { service: TestService };
  beforeAll(async () => {
    suite.service = await startTestService(engine, options);
  }, startTimeout);
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

/** A suite's service, its account (as suiteServiceWithAccount) and one identity that account created from `identity`'s fields. */
export function suiteServiceWithIdentity(
  engine: Engine,
  { identity, ...options }: TestServiceOptions & { credits?: number; identity: FormFields },
): SuiteServiceWithIdentity {
  const suite = suiteServiceWithAccount(engine, options) as SuiteServiceWithAccount & { identity: IdentityBody };
  beforeAll(async () => {
    suite.identity = await createIdentity(suite.account, identity);
  });
  return suite;
}

/**
 * As suiteServiceWithAccount, on a service that delivers to loopback promptly (LOOPBACK_WEBHOOKS_ENV
 * added to `env`), with the account's webhook of `events` pointed at a receiver.
 */
export function suiteServiceWithWebhooks(
  engine: Engine,
  events: string[],
  { env = {}, ...options }: TestServiceOptions & { credits?: number } = {},
): SuiteServiceWithWebhooks {
  return withWebhooks(
    suiteServiceWithAccount(engine, { ...options, env: { ...env, ...LOOPBACK_WEBHOOKS_ENV } }),
    events,
  );
}

/**
 * `suite`, its account's webhook of `events` pointed at a receiver that its beforeAll starts and
 * its afterAll stops (the service delivers to loopback: LOOPBACK_WEBHOOKS_ENV in its env).
 */
export function withWebhooks(suite: SuiteServiceWithAccount, events: string[]): SuiteServiceWithWebhooks {
  const subscribed = suite as SuiteServiceWithAccount & { receiver: WebhookReceiver; secret: string };
  beforeAll(async () => {
    Object.assign(subscribed, await subscribedReceiver(suite.account, events));
  });
  afterAll(() => subscribed.receiver?.stop());
  return subscribed;
}
