// Bursts (docs/api.md#sessions-start): a worker keeps a job process warm for each slot no job
// holds, so as many visitors as it has free slots, arriving in the same second, all get their
// avatar at once; and sessions that end before their agent arrives cost the worker nothing
// (their dispatch is deleted, and the worker refuses jobs for rooms that are gone), so the
// next visitor does not wait behind them (on a slow machine an offer can beat the end: that
// job ends with its room, and the case checks only that the next visitor is not held up). The 1.5 s target is bench/sessions' (--bursts),
// not a bound here: on a loaded 2-core CI machine a timed bound failed where nothing was
// wrong. What makes the figure is checked instead: every job runs in a process that was
// already warm before its start call, and no process is forked beside them (a visitor queued
// behind a process start waits 4–8 s; a spare process competes with the starting sessions).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { TrackKind } from '@livekit/rtc-node';
import { RoomServiceClient } from 'livekit-server-sdk';
import { jobOfferAnswerer } from '../../agent/job-offers.ts';
import { httpUrlOf } from '../../src/livekit/connection.ts';
import { freeAgentSlots } from '../../src/workers/admission.ts';
import { jobProcesses } from '../support/processes.ts';
import type { TestAccount, TestService } from '../support/service.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';
import { startAgentService } from '../support/visitor-service.ts';
import { createAstronaut, FrameLog, startSession } from './support.ts';

const SLOTS = 3;

describe(`a worker of ${SLOTS} slots under a burst`, () => {
  let service: TestService;
  let account: TestAccount;
  let identityId = '';
  const saved = process.env.AGENT_MAX_JOBS;

  beforeAll(async () => {
    // The worker reads it from the environment, as `likeness serve` does.
    process.env.AGENT_MAX_JOBS = String(SLOTS);
    ({ service, account } = await startAgentService('pglite', {}, 100_000));
    identityId = (await createAstronaut(account, { language: 'en' })).identity_id;
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    if (saved === undefined) delete process.env.AGENT_MAX_JOBS;
    else process.env.AGENT_MAX_JOBS = saved;
  });

  /** Every slot free again, as the worker's heartbeats say, and a warm process for each. */
  const warm = async () => {
    await eventually(() => service.worker!.warmProcesses() >= SLOTS, 90_000, `${SLOTS} warm job processes`);
    await eventually(
      async () =>
        (await freeAgentSlots(service.services.database.db, service.config.livekit.agentName, 60)).free >= SLOTS,
      30_000,
      'every slot free',
    );
    // ...and LiveKit sees it too (agents tell it their load every 2.5 s; a dispatch it got
    // while the worker still looked full would be lost and sent again 2 s later).
    await Bun.sleep(3_000);
  };

  /** Start call → the first avatar frame at a visitor who joins as the call answers. */
  async function firstFrameMs(): Promise<{ ms: number; session: StartedSession; leave(): Promise<void> }> {
    const t0 = performance.now();
    const session = await startSession(account, { identity_id: identityId });
    let video: FrameLog | undefined;
    const visitor = await joinAsVisitor(session, {
      onTrack: (track) => void (track.kind === TrackKind.KIND_VIDEO && (video = new FrameLog(track))),
    });
    await eventually(() => (video?.frames.length ?? 0) > 0, 20_000, 'the first avatar frame');
    const ms = video!.frames[0]!.at - t0;
    return {
      ms,
      session,
      leave: async () => {
        video?.close();
        await visitor.leave();
        await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      },
    };
  }

  test(`the worker keeps ${SLOTS} job processes warm, one per slot`, async () => {
    await warm();
    expect(service.worker!.capacity).toBe(SLOTS);
  }, 120_000);

  test(`${SLOTS} visitors in the same second each get their avatar from a process warm before they came`, async () => {
    await warm();
    const warmBefore = jobProcesses().sort();
    expect(warmBefore).toHaveLength(SLOTS);
    const joined = await Promise.all(Array.from({ length: SLOTS }, () => firstFrameMs()));
    try {
      console.log(
        `burst of ${SLOTS}: start call → first avatar frame ${joined.map((j) => Math.round(j.ms)).join(', ')} ms`,
      );
      // Every slot holds a job, each in one of the processes that were warm: none was started
      // for them, no spare one forked beside them, and none is while they run.
      expect(service.worker!.warmProcesses()).toBe(0);
      await Bun.sleep(1_000);
      expect(jobProcesses().sort()).toEqual(warmBefore);
    } finally {
      await Promise.all(joined.map((j) => j.leave()));
    }
  }, 120_000);

  test('the worker refuses an offer for a room that is gone or while it is full, and takes the others', async () => {
    const { url, apiKey, apiSecret } = service.services.livekit;
    const rooms = new RoomServiceClient(httpUrlOf(url), apiKey, apiSecret);
    const room = `offered_${crypto.randomUUID()}`;
    await rooms.createRoom({ name: room, emptyTimeout: 60 });
    let taken = 0;
    const answer = jobOfferAnswerer({ rooms, capacity: SLOTS, taken: () => taken });
    expect(await answer(room)).toBe('accept');
    taken = SLOTS;
    expect(await answer(room)).toBe('reject');
    taken = 0;
    // A burst of offers answered together: as many taken as there are slots, as each accept counts at once.
    const burst = await Promise.all(
      Array.from({ length: SLOTS + 4 }, async () => {
        const answered = await answer(room);
        if (answered === 'accept') taken++;
        return answered;
      }),
    );
    expect(burst.filter((a) => a === 'accept')).toHaveLength(SLOTS);
    taken = 0;
    await rooms.deleteRoom(room);
    expect(await answer(room)).toBe('reject');
    // LiveKit not answering the lookup: the session is not refused its agent over it.
    const silent = new RoomServiceClient('http://127.0.0.1:9', apiKey, apiSecret, { requestTimeout: 1 });
    expect(await jobOfferAnswerer({ rooms: silent, capacity: SLOTS, taken: () => 0 })(room)).toBe('accept');
  });

  test('sessions ended before their agent came leave the next visitor a process warm before they came', async () => {
    await warm();
    // As many sessions as the worker takes, started and ended at once. An offer that comes after
    // its end is refused (the case above); on a slow machine it can come first, and that job ends
    // with its room while its process is replaced.
    const abandoned = await Promise.all(
      Array.from({ length: SLOTS }, () => startSession(account, { identity_id: identityId })),
    );
    await Promise.all(abandoned.map((s) => account.call('POST', `/v1/sessions/${s.room_name}/end`)));
    await Bun.sleep(1_000);
    console.log(
      `${SLOTS} abandoned sessions: ${service.worker!.warmProcesses()} of ${SLOTS} processes still warm 1 s after their ends`,
    );
    await eventually(() => service.worker!.warmProcesses() >= SLOTS, 90_000, `${SLOTS} warm job processes again`);
    const warmBefore = jobProcesses().sort();
    expect(warmBefore).toHaveLength(SLOTS);
    const next = await firstFrameMs();
    try {
      console.log(`after ${SLOTS} abandoned sessions: start call → first avatar frame ${Math.round(next.ms)} ms`);
      // The next visitor's job took one of them: no ghost job of an abandoned session did.
      await Bun.sleep(1_000);
      expect(service.worker!.warmProcesses()).toBe(SLOTS - 1);
      expect(jobProcesses().sort()).toEqual(warmBefore);
    } finally {
      await next.leave();
    }
  }, 150_000);
});
