// A running session written straight into the database, with the report token its agent job
// would hold: for suites of the job's own routes (tool calls, retrieval) that need no room.
import { afterAll, beforeAll } from 'bun:test';
import { hashApiKey } from '../../src/auth/api-keys.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { type IdentityBody, identityForm } from './forms.ts';
import { type Engine, startTestService, type TestAccount, type TestService } from './service.ts';

let count = 0;

export async function runningJobSession(
  service: TestService,
  accountId: string,
  fixed: { toolIds?: string[]; documentIds?: string[] } = {},
): Promise<{ id: string; token: string }> {
  const id = `ses_job${++count}${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const token = `rpt_${crypto.randomUUID()}`;
  await service.services.database.db.insert(sessions).values({
    id,
    accountId,
    identityId: null,
    avatarEnabled: false,
    language: 'en',
    visualAwareness: false,
    dispatchId: `AD_${id}`,
    visitorIdentity: `visitor-${id}`,
    reportTokenHash: hashApiKey(token),
    maxDurationSeconds: 1800,
    status: 'running',
    ...fixed,
  });
  return { id, token };
}

/** The metadata a started session's agent job was dispatched with (LiveKit's own record of the dispatch). */
export async function dispatchedTo(service: TestService, roomName: string): Promise<Record<string, unknown>> {
  const [dispatch] = (await service.services.livekit.dispatches.listDispatch(roomName)).filter((d) => d.agentName);
  if (!dispatch) throw new Error(`no agent dispatch for ${roomName}`);
  return JSON.parse(dispatch.metadata) as Record<string, unknown>;
}

/** Reports as the session's job sends them: to its report_url, with its report token (or `token`). */
export async function jobReporter(
  service: TestService,
  roomName: string,
): Promise<(body: unknown, token?: string) => Promise<Response>> {
  const { report_url, report_token } = (await dispatchedTo(service, roomName)) as {
    report_url: string;
    report_token: string;
  };
  return (body, token = report_token) =>
    fetch(report_url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
}

/**
 * For suites that play a session's agent job themselves: a service with the local LiveKit server
 * and no agent worker (the dispatch waits unanswered, the test reports as the job would), no
 * onboarding credits, an account with `credits`, and an identity to start sessions on.
 */
export async function jobReportService(
  engine: Engine,
  { env = {}, credits }: { env?: Record<string, string>; credits: number },
): Promise<{ service: TestService; account: TestAccount; identity: IdentityBody }> {
  const service = await startTestService(engine, { livekit: 'local', env: { CREDITS_ONBOARDING: '0', ...env } });
  const account = await service.account({ credits });
  const created = await account.call('POST', '/v1/identities', { body: await identityForm({ language: 'en' }) });
  return { service, account, identity: (await created.json()) as IdentityBody };
}

export interface JobReportSuite {
  service: TestService;
  account: TestAccount;
  identity: IdentityBody;
}

/**
 * jobReportService for the tests of the describe it is called in: started before them and
 * stopped after them. Its fields are set once the service has started.
 */
export function jobReportSuite(
  engine: Engine,
  options: { env?: Record<string, string>; credits: number },
): JobReportSuite {
  const suite = {} as JobReportSuite;
  beforeAll(async () => {
    Object.assign(suite, await jobReportService(engine, options));
  });
  afterAll(() => suite.service?.stop());
  return suite;
}

/** A session started on `identity`, and the reporter its job would report with. */
export async function reportedSession(
  service: TestService,
  account: TestAccount,
  identity: IdentityBody,
): Promise<{ id: string; report: Awaited<ReturnType<typeof jobReporter>> }> {
  const response = await account.call('POST', '/v1/sessions/start', {
    body: JSON.stringify({ identity_id: identity.identity_id }),
    headers: { 'content-type': 'application/json' },
  });
  const { room_name } = (await response.json()) as { room_name: string };
  return { id: room_name, report: await jobReporter(service, room_name) };
}
