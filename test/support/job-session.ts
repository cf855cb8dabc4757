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
