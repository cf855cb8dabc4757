// The periodic sweeps (src/sweeps.ts, listed in src/server.ts) each run on their own: one that
// fails is logged under its own name and stops none of the others, in this interval or the next.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { configureLogging } from '../../src/logging/index.ts';
import { runSweeps } from '../../src/sweeps.ts';
import { agentWorkers } from '../../src/workers/schema.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';

describe('runSweeps', () => {
  test('a sweep that rejects or throws is reported by name; the ones after it still run', async () => {
    const ran: string[] = [];
    const failed: [string, string][] = [];
    await runSweeps(
      [
        { name: 'first', run: async () => void ran.push('first') },
        {
          name: 'rejecting',
          run: async () => {
            ran.push('rejecting');
            throw new Error('no database');
          },
        },
        {
          name: 'throwing',
          run: () => {
            ran.push('throwing');
            throw new Error('thrown before any promise');
          },
        },
        { name: 'last', run: async () => void ran.push('last') },
      ],
      (name, error) => failed.push([name, (error as Error).message]),
    );
    expect(ran).toEqual(['first', 'rejecting', 'throwing', 'last']);
    expect(failed).toEqual([
      ['rejecting', 'no database'],
      ['throwing', 'thrown before any promise'],
    ]);
  });
});

describe("the service's sweeps", () => {
  let service: TestService;
  const lines: string[] = [];
  beforeAll(async () => {
    service = await startTestService('pglite', { env: { SESSION_SWEEP_INTERVAL_SECONDS: '1' } });
  });
  afterEach(() => configureLogging({ level: 'warn', format: 'json' }));
  afterAll(() => service?.stop());

  test('with the session and voice sweeps failing, the worker sweep still forgets a long-gone worker', async () => {
    configureLogging({ level: 'warn', format: 'json' }, { write: (line: string) => void lines.push(line) });
    // The failing steps, injected: the first two sweeps of every interval.
    const calls = { session: 0, voice: 0 };
    service.services.lifecycle.sweep = async () => {
      calls.session++;
      throw new Error('injected session sweep failure');
    };
    service.services.voices.releaseUnused = async () => {
      calls.voice++;
      throw new Error('injected voice sweep failure');
    };
    const { db } = service.services.database;
    await db.insert(agentWorkers).values({
      id: 'gone-two-hours',
      agentName: 'likeness-agent',
      capacity: 3,
      runningJobs: 0,
      draining: false,
      seenAt: sql`now() - make_interval(secs => 7202)`,
      expiresAt: sql`now() - make_interval(secs => 7200)`,
    });
    await eventually(
      async () => (await db.select({ id: agentWorkers.id }).from(agentWorkers)).length === 0,
      10_000,
      'the worker sweep to run after the failing ones',
    );
    expect(calls.session).toBeGreaterThan(0);
    expect(calls.voice).toBeGreaterThan(0);
    const logged = lines.map((line) => JSON.parse(line) as { msg: string; sweep?: string; err?: { message: string } });
    expect(logged).toContainEqual(
      expect.objectContaining({
        msg: 'the session sweep failed',
        sweep: 'session',
        err: expect.objectContaining({ message: 'injected session sweep failure' }),
      }),
    );
    expect(logged).toContainEqual(
      expect.objectContaining({
        msg: 'the voice sweep failed',
        sweep: 'voice',
        err: expect.objectContaining({ message: 'injected voice sweep failure' }),
      }),
    );
    expect(logged.filter((line) => line.sweep === 'worker' || line.sweep === 'recovery')).toEqual([]);
  }, 30_000);
});
