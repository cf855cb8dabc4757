// A running session written straight into the database, with the report token its agent job
// would hold: for suites of the job's own routes (tool calls, retrieval) that need no room.
import { hashApiKey } from '../../src/auth/api-keys.ts';
import { sessions } from '../../src/sessions/schema.ts';
import type { TestService } from './service.ts';

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
