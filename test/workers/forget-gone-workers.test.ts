// The sweep forgets agent workers gone for an hour (src/workers/index.ts, forgetGoneWorkers):
// every restart of a worker is a new row, and without it agent_workers grows for ever. A worker
// gone for less than that, or alive, keeps its row (the admission and the agent watch read them).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { agentWorkers } from '../../src/workers/schema.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';

let service: TestService;

beforeAll(async () => {
  service = await startTestService('pglite', { env: { SESSION_SWEEP_INTERVAL_SECONDS: '1' } });
});
afterAll(async () => {
  await service?.stop();
});

describe('the sweep and the rows of agent workers', () => {
  test('rows of workers gone for over an hour are deleted; recently gone and live ones stay', async () => {
    const { db } = service.services.database;
    const row = (id: string, expiresSecondsAgo: number) => ({
      id,
      agentName: 'likeness-agent',
      capacity: 3,
      runningJobs: 0,
      draining: false,
      seenAt: sql`now() - make_interval(secs => ${expiresSecondsAgo + 2})`,
      expiresAt: sql`now() - make_interval(secs => ${expiresSecondsAgo})`,
    });
    await db
      .insert(agentWorkers)
      .values([row('gone-two-hours', 7_200), row('gone-ten-minutes', 600), row('alive', -2)]);
    const ids = async () => (await db.select({ id: agentWorkers.id }).from(agentWorkers)).map((r) => r.id).sort();
    await eventually(
      async () => !(await ids()).includes('gone-two-hours'),
      10_000,
      'the sweep to forget the long-gone worker',
    );
    expect(await ids()).toEqual(['alive', 'gone-ten-minutes']);
  }, 30_000);
});
