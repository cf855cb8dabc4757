// The set-up most conversation and avatar suites share: a service (on PGlite unless told) with the local LiveKit
// server and an agent worker that talks to the process's shared provider fakes (wire fakes of
// Deepgram, OpenAI and ElevenLabs), no onboarding credits (a suite's charges are its own), and
// one account with enough credits for its sessions.
import { sharedProviderFakes } from './preload.ts';
import { type Engine, startTestService, type TestAccount, type TestService } from './service.ts';

export interface VisitorService {
  service: TestService;
  account: TestAccount;
}

/** `env` adds to (or overrides) the fakes' environment; `credits` is the account's balance. */
export async function startVisitorService(
  env: Record<string, string> = {},
  { credits = 10_000, engine = 'pglite' }: { credits?: number; engine?: Engine } = {},
): Promise<VisitorService> {
  return startAgentService(engine, { ...sharedProviderFakes().env, CREDITS_ONBOARDING: '0', ...env }, credits);
}

/**
 * The same service configured by `env` alone: for suites whose control plane runs as configured
 * otherwise (its onboarding credits, no provider keys of its own; the agent's jobs still reach
 * the fakes through this process's environment).
 */
export async function startAgentService(
  engine: Engine,
  env: Record<string, string>,
  credits: number,
): Promise<VisitorService> {
  const service = await startTestService(engine, { livekit: 'local', agent: true, env });
  return { service, account: await service.account({ credits }) };
}
