// Issue 16's MaxListenersExceededWarning ("11 error listeners … 11 put listeners"): every job a
// worker accepted waits in agents' process pool (`Queue.get`: one `put` and one `error`
// listener on the pool's emitter each) until a warm process frees up. A worker accepting every
// job of a burst let them pile up there; it now refuses jobs beyond its capacity (LiveKit
// offers them to another worker, or the control plane dispatches them again), so at most
// `capacity` wait. Fifteen sessions started at once against one worker of three slots.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createAstronaut, startSession } from '../avatar/support.ts';
import type { TestAccount, TestService } from '../support/service.ts';
import { startAgentService } from '../support/visitor-service.ts';

describe('a burst of sessions beyond a worker’s capacity', () => {
  let service: TestService;
  let account: TestAccount;
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);

  beforeAll(async () => {
    // Admission off: every start is dispatched, as when the workers' heartbeats lag a burst.
    ({ service, account } = await startAgentService('pglite', { SESSION_ADMISSION: 'off' }, 100_000));
    process.on('warning', onWarning);
  }, 120_000);
  afterAll(async () => {
    process.off('warning', onWarning);
    await service?.stop();
  });

  test('the worker takes what it has slots for and leaves no listener piling up in its pool', async () => {
    const identity = await createAstronaut(account, { language: 'en' });
    const sessions = await Promise.all(
      Array.from({ length: 15 }, () => startSession(account, { identity_id: identity.identity_id })),
    );
    // LiveKit offers each job as it is dispatched; give the worker time to take or refuse them all.
    await Bun.sleep(8_000);
    const worker = service.worker!;
    const running = (await (await fetch(`${worker.healthUrl}/worker`)).json()) as { jobs?: number; capacity?: number };
    console.log(
      `burst of 15 on a worker of ${worker.capacity} slots: ${JSON.stringify(running)}; warnings: ${warnings.map((w) => w.name).join(', ') || 'none'}`,
    );
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    for (const session of sessions) await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  }, 60_000);
});
