// A Postgres crash mid-session (docs/reliability.md): one of the service's server processes
// SIGKILLed, so the postmaster ends every connection and recovers, as after a crash. The
// session streams on through it; the job's minute reports that failed meanwhile are tried
// again, so every minute is charged once, none twice and none lost; the service is ready
// again within seconds and answers as before.
import { describe, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { and, eq, like } from 'drizzle-orm';
import { creditLedger } from '../../src/credits/schema.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { createAstronaut, joinWatchingVideo, startSession } from '../avatar/support.ts';
import { suiteAgentService } from '../support/suite-agent-service.ts';
import { eventually } from '../support/visitor.ts';

const MINUTE_SECONDS = 2;

describe('Postgres crashing mid-session', () => {
  const suite = suiteAgentService('postgres', { BILLING_INTERVAL_SECONDS: String(MINUTE_SECONDS) }, 10_000);

  test('the session streams on, every minute is charged once, and the service is ready again', async () => {
    const db = suite.service.services.database.db;
    const identity = await createAstronaut(suite.account, { language: 'en' });
    const session = await startSession(suite.account, { identity_id: identity.identity_id });
    const { visitor, videos } = await joinWatchingVideo(session);
    const row = async () => (await db.select().from(sessions).where(eq(sessions.id, session.room_name)))[0]!;
    try {
      await eventually(() => (videos[0]?.frames.length ?? 0) >= 25, 30_000, 'the avatar streaming');
      await eventually(async () => (await row()).billedMinutes >= 1, 15_000, 'a minute charged');

      // One of the service's own server processes, killed outright: Postgres then ends every
      // connection (this service's pool included) and runs crash recovery.
      const observer = new SQL(suite.service.config.databaseUrl!);
      const [backend] =
        (await observer`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() limit 1`) as {
          pid: number;
        }[];
      expect(backend).toBeDefined();
      const framesBefore = videos[0]!.frames.length;
      process.kill(backend!.pid, 'SIGKILL');
      const crashedAt = Date.now();

      // The crash did happen: Postgres ended every connection, the observer's own too (a 503
      // on /readyz shows it only when recovery outlasts a probe; it took 0.6-2 s here).
      let observerCut = false;
      await eventually(
        async () => {
          observerCut ||= await observer`select 1`.then(
            () => false,
            () => true,
          );
          return observerCut;
        },
        10_000,
        'Postgres to end the other connections',
      );
      await observer.close().catch(() => undefined);
      // Ready again within seconds.
      await eventually(
        async () => (await fetch(`${suite.service.url}/readyz`).catch(() => undefined))?.status === 200,
        30_000,
        '/readyz 200 after recovery',
      );
      console.log(`Postgres backend SIGKILL: /readyz 200 again after ${Date.now() - crashedAt} ms`);
      const billedAfterCrash = (await row()).billedMinutes;
      // The session runs on: the avatar kept streaming, and minutes go on being charged.
      await eventually(
        async () => (await row()).billedMinutes >= billedAfterCrash + 2,
        6 * MINUTE_SECONDS * 1000,
        'two more minutes charged',
      );
      expect(videos).toHaveLength(1);
      expect(videos[0]!.frames.length).toBeGreaterThan(framesBefore + 25);
      expect(visitor.room.isConnected).toBe(true);
      const current = await row();
      expect(current.status).toBe('running');
      // Every minute charged exactly once, numbered without a gap, and the row agrees with the ledger.
      const minutes = await db
        .select({ reference: creditLedger.reference })
        .from(creditLedger)
        .where(
          and(
            eq(creditLedger.kind, 'session_minute'),
            like(creditLedger.reference, `session:${session.room_name}:minute:%`),
          ),
        );
      const indices = minutes.map((m) => Number(m.reference.split(':').at(-1))).sort((a, b) => a - b);
      // Once seen in CI: the row one minute ahead of the ledger. What each held, to read it next time.
      if (current.billedMinutes !== indices.length)
        console.log(
          `postgres-crash: the row says ${current.billedMinutes} minutes, the ledger has ${JSON.stringify(indices)}; the row again: ${(await row()).billedMinutes}`,
        );
      expect(indices).toEqual(Array.from({ length: indices.length }, (_, i) => i));
      expect(current.billedMinutes).toBe(indices.length);
      // The API answers as before.
      expect((await suite.account.call('GET', `/v1/sessions/${session.room_name}`)).status).toBe(200);
    } finally {
      await visitor.leave();
    }
    const ended = await eventually(
      async () => ((await row()).status === 'ended' ? await row() : undefined),
      15_000,
      'the session ended',
    );
    expect(ended.endReason).toBe('client_left');
    const balance = (await suite.service.services.ledger.balance(suite.account.accountId))!;
    const entries = await suite.service.services.ledger.entries(suite.account.accountId, 1000);
    expect(entries.reduce((sum, e) => sum + e.amount, 0)).toBe(balance);
  }, 120_000);
});
