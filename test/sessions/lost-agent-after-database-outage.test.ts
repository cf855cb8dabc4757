// The agent watch (src/sessions/agent-watch.ts) takes a session's agent for lost when no
// worker's heartbeat has listed the session lately. While the database is unreachable the
// heartbeats cannot be recorded either, so right after an outage every session looks unlisted:
// the watch waits a heartbeat's lifetime after its last failure before judging (a Postgres
// crash test once saw a live agent moved and a second one join). Likewise while no worker's
// heartbeat gets through at all (a machine too busy to send or record them: a blocked event loop
// once cost a lone worker's live agent its place). Here the failures are made to order and the
// watch is driven by hand (SESSION_ADMISSION=off: the service runs no watch of its own).
// The same for a dispatch nobody answered: not while a worker that may have taken it has not
// beaten since, nor while LiveKit says a worker accepted it. And a look with no session running is one query (it runs four times a second).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { HEARTBEAT_TTL_SECONDS } from '../../src/contract/index.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { agentWorkers } from '../../src/workers/schema.ts';
import { createAstronaut, startSession } from '../avatar/support.ts';
import { acceptingWorker } from '../support/accepting-worker.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';

let service: TestService;

beforeAll(async () => {
  service = await startTestService('pglite', { livekit: 'local', env: { SESSION_ADMISSION: 'off' } });
}, 120_000);
afterAll(() => service?.stop());

/** Counts the queries `db` builds while `run` runs (select, update and the rest, by method). */
async function queriesDuring(db: TestService['services']['database']['db'], run: () => Promise<unknown>) {
  const counted: Record<string, number> = {};
  const methods = ['select', 'update', 'insert', 'delete', 'execute'] as const;
  const originals = methods.map((method) => db[method]);
  methods.forEach((method, i) => {
    const original = originals[i] as (...args: unknown[]) => unknown;
    (db as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      counted[method] = (counted[method] ?? 0) + 1;
      return original.apply(db, args);
    };
  });
  try {
    await run();
  } finally {
    methods.forEach((method, i) => {
      (db as unknown as Record<string, unknown>)[method] = originals[i];
    });
  }
  return counted;
}

test('with no session running, a look is one query; with one, the whole look runs', async () => {
  const db = service.services.database.db;
  const watch = service.services.agentWatch;
  expect(await queriesDuring(db, () => watch.tick())).toEqual({ select: 1 });
  const account = await service.account({ credits: 1_000 });
  const identity = await createAstronaut(account, { language: 'en' });
  const session = await startSession(account, { identity_id: identity.identity_id });
  try {
    // The probe, the fleet's heartbeats, the claim of lost agents, and the unanswered dispatches
    // (their query and its subquery, each built as a select).
    expect(await queriesDuring(db, () => watch.tick())).toEqual({ select: 4, update: 1 });
  } finally {
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  }
  expect(await queriesDuring(db, () => watch.tick())).toEqual({ select: 1 });
}, 60_000);

test('an agent unlisted only because heartbeats could not be recorded is not taken for lost; once they could have been, it is', async () => {
  const account = await service.account({ credits: 1_000 });
  const identity = await createAstronaut(account, { language: 'en' });
  const session = await startSession(account, { identity_id: identity.identity_id });
  const db = service.services.database.db;
  // An agent joined, last listed well over a heartbeat's lifetime ago.
  await db
    .update(sessions)
    .set({ agentJoinedAt: sql`now() - interval '10 seconds'`, agentSeenAt: sql`now() - interval '10 seconds'` })
    .where(eq(sessions.id, session.room_name));
  const joined = async () =>
    (await db.select().from(sessions).where(eq(sessions.id, session.room_name)))[0]!.agentJoinedAt;
  const watch = service.services.agentWatch;

  // The database goes away for one look.
  const update = db.update.bind(db);
  db.update = (() => {
    throw new Error('connection terminated');
  }) as typeof db.update;
  try {
    await expect(watch.tick()).rejects.toThrow('connection terminated');
  } finally {
    db.update = update;
  }
  // Back at once: the stale listing is the outage's, not the agent's.
  expect(await watch.tick()).toEqual([]);
  expect(await joined()).not.toBeNull();

  // A heartbeat's lifetime and two intervals later, an unlisted agent is lost: dispatched again.
  await Bun.sleep(HEARTBEAT_TTL_SECONDS * 1000 + 1_200);
  expect(await watch.tick()).toEqual([session.room_name]);
  expect(await joined()).toBeNull();
}, 60_000);

test("while no worker's heartbeat gets through, an unlisted agent is not taken for lost for 10 s; once a worker beats, or the silence lasts longer, it is", async () => {
  const account = await service.account({ credits: 1_000 });
  const identity = await createAstronaut(account, { language: 'en' });
  const db = service.services.database.db;
  const agentName = service.config.livekit.agentName;
  const watch = service.services.agentWatch;
  const unlisted = async () => {
    const session = await startSession(account, { identity_id: identity.identity_id });
    // An agent joined, last listed well over a heartbeat's lifetime ago.
    await db
      .update(sessions)
      .set({ agentJoinedAt: sql`now() - interval '10 seconds'`, agentSeenAt: sql`now() - interval '10 seconds'` })
      .where(eq(sessions.id, session.room_name));
    return session.room_name;
  };
  const joined = async (id: string) => (await db.select().from(sessions).where(eq(sessions.id, id)))[0]!.agentJoinedAt;
  const worker = (id: string, silentFor: number) => ({
    id,
    agentName,
    capacity: 2,
    runningJobs: 1,
    seenAt: sql`now() - make_interval(secs => ${silentFor})`,
    expiresAt: sql`now() - make_interval(secs => ${silentFor - HEARTBEAT_TTL_SECONDS})`,
  });

  // The only worker last heard 3 s ago: nobody's beats get through; its agent stays.
  const first = await unlisted();
  await db.insert(agentWorkers).values(worker('worker-quiet', 3));
  // (Sessions of the test above may be dispatched again meanwhile: only this one is looked at.)
  expect(await watch.tick()).not.toContain(first);
  expect(await joined(first)).not.toBeNull();
  // Another worker beats: heartbeats get through, and the unlisted agent is lost.
  await db.insert(agentWorkers).values(worker('worker-beating', 0));
  expect(await watch.tick()).toContain(first);
  expect(await joined(first)).toBeNull();

  // Silence from every worker for longer than the grace: the agent is lost all the same.
  await db.delete(agentWorkers).where(eq(agentWorkers.id, 'worker-beating'));
  await db.update(agentWorkers).set(worker('worker-quiet', 11)).where(eq(agentWorkers.id, 'worker-quiet'));
  const second = await unlisted();
  expect(await watch.tick()).toContain(second);
  expect(await joined(second)).toBeNull();
}, 60_000);

test('a dispatch no worker lists is dispatched again only once every live worker has beaten since without listing it', async () => {
  const account = await service.account({ credits: 1_000 });
  const identity = await createAstronaut(account, { language: 'en' });
  const db = service.services.database.db;
  const watch = service.services.agentWatch;
  const session = await startSession(account, { identity_id: identity.identity_id });
  const dispatchedAt = async () =>
    (await db.select().from(sessions).where(eq(sessions.id, session.room_name)))[0]!.dispatchedAt!.getTime();
  // Dispatched 6 s ago; nobody has joined or listed it.
  await db
    .update(sessions)
    .set({ dispatchedAt: sql`now() - interval '6 seconds'`, agentJoinedAt: null, agentSeenAt: null })
    .where(eq(sessions.id, session.room_name));
  const before = await dispatchedAt();
  const worker = (id: string, seenSecondsAgo: number) => ({
    id,
    agentName: service.config.livekit.agentName,
    capacity: 4,
    runningJobs: 0,
    seenAt: sql`now() - make_interval(secs => ${seenSecondsAgo})`,
    expiresAt: sql`now() + interval '30 seconds'`,
  });
  // One worker beats; another's last beat came a second after the dispatch (its loop stalled
  // while it took the job, or the beat waited on the API): it may yet list the session.
  await db.insert(agentWorkers).values([worker('worker-live', 0), worker('worker-stalled', 5)]);
  expect(await watch.tick()).not.toContain(session.room_name);
  expect(await dispatchedAt()).toBe(before);
  // Its next beat does not list it either: nobody took the dispatch, which is made again.
  await db.update(agentWorkers).set(worker('worker-stalled', 0)).where(eq(agentWorkers.id, 'worker-stalled'));
  expect(await watch.tick()).toContain(session.room_name);
  expect(await dispatchedAt()).toBeGreaterThan(before);
  await db.delete(agentWorkers).where(sql`${agentWorkers.id} in ('worker-live', 'worker-stalled')`);
}, 60_000);

test('a dispatch LiveKit saw a worker accept is not made again while the job may still come (20 s), whatever the heartbeats say; after that it is', async () => {
  const { livekit } = service.services;
  // Takes the dispatch at once and never runs it: a job slow to get its process.
  const worker = await acceptingWorker({
    url: livekit.url,
    apiKey: livekit.apiKey,
    apiSecret: livekit.apiSecret,
    agentName: service.config.livekit.agentName,
  });
  try {
    const account = await service.account({ credits: 1_000 });
    const identity = await createAstronaut(account, { language: 'en' });
    const db = service.services.database.db;
    const watch = service.services.agentWatch;
    const session = await startSession(account, { identity_id: identity.identity_id });
    /** The jobs LiveKit has on record as accepted for the session's dispatch `id`. */
    const acceptedOnRecord = async (id: string) =>
      (await livekit.dispatches.listDispatch(session.room_name)).find((dispatch) => dispatch.id === id)?.state?.jobs
        .length ?? 0;
    const row = async () => (await db.select().from(sessions).where(eq(sessions.id, session.room_name)))[0]!;
    // Dispatched 6 s ago, and every live worker's beat since has come without listing it (the
    // accepting worker's beats held back behind a busy API loop, as in run 97).
    const dispatchedSecondsAgo = (seconds: number) =>
      db
        .update(sessions)
        .set({ dispatchedAt: sql`now() - make_interval(secs => ${seconds})`, agentJoinedAt: null, agentSeenAt: null })
        .where(eq(sessions.id, session.room_name));
    await dispatchedSecondsAgo(6);
    await db.insert(agentWorkers).values({
      id: 'worker-beating',
      agentName: service.config.livekit.agentName,
      // Room to spare beside the sessions the tests above left running without an agent.
      capacity: 100,
      runningJobs: 0,
      seenAt: sql`now()`,
      expiresAt: sql`now() + interval '30 seconds'`,
    });
    const first = await row();
    await eventually(async () => (await acceptedOnRecord(first.dispatchId)) === 1, 10_000, 'the acceptance on record');
    expect(await watch.tick()).not.toContain(session.room_name);
    expect((await row()).dispatchId).toBe(first.dispatchId);
    // 20 s on, the job never came (its worker died with it, say): another dispatch takes the session.
    await dispatchedSecondsAgo(21);
    expect(await watch.tick()).toContain(session.room_name);
    expect((await row()).dispatchId).not.toBe(first.dispatchId);
    const second = (await row()).dispatchId;
    await eventually(async () => (await acceptedOnRecord(second)) === 1, 10_000, 'the new dispatch to be accepted');
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  } finally {
    worker.close();
    await service.services.database.db.delete(agentWorkers).where(eq(agentWorkers.id, 'worker-beating'));
  }
}, 60_000);
