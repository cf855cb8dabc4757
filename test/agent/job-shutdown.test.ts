// A job's shutdown work (agent/job-shutdown.ts): run once, by agents' shutdown callback as
// usual, or by the job itself when agents has not begun it a while after the room was gone
// (agents' own waits for the entry function and AgentSession.close() can take 75 s), after
// which the process ends.
import { describe, expect, test } from 'bun:test';
import { jobShutdown } from '../../agent/job-shutdown.ts';
import { recordingLogger } from '../support/agent-log.ts';

/** What agents' JobContext offers: the callbacks it will run at its shutdown. */
function fakeContext() {
  const callbacks: (() => Promise<void>)[] = [];
  return {
    addShutdownCallback: (callback: () => Promise<void>) => void callbacks.push(callback),
    /** agents' shutdown reaching its callbacks. */
    runCallbacks: () => Promise.allSettled(callbacks.map((callback) => callback())),
  };
}

describe('a job’s shutdown work', () => {
  test('agents runs it as its callback: each step once, and the process is left to agents', async () => {
    const ctx = fakeContext();
    const exits: number[] = [];
    const shutdown = jobShutdown(ctx, recordingLogger(), { afterRoomMs: 50, exit: (code) => void exits.push(code) });
    const ran: string[] = [];
    shutdown.add(() => ran.push('meter'));
    shutdown.add(async () => ran.push('avatar'));
    shutdown.roomGone();
    await ctx.runCallbacks();
    await Bun.sleep(120);
    expect(ran.sort()).toEqual(['avatar', 'meter']);
    expect(exits).toEqual([]);
  });

  test('agents held up after the room is gone: the job does the work itself, then ends its process', async () => {
    const ctx = fakeContext();
    const logger = recordingLogger();
    const exits: number[] = [];
    const shutdown = jobShutdown(ctx, logger, { afterRoomMs: 50, exit: (code) => void exits.push(code) });
    const ran: string[] = [];
    let stepsDone = 0;
    shutdown.add(async () => {
      await Bun.sleep(30);
      ran.push('recording part');
      stepsDone++;
    });
    shutdown.add(() => {
      throw new Error('the meter failed');
    });
    shutdown.add(() => {
      ran.push('meter');
      stepsDone++;
    });
    shutdown.roomGone();
    await Bun.sleep(20);
    expect(ran).toEqual([]); // not before its time
    await Bun.sleep(150);
    // Every step ran (a failing one did not stop the others), and only then the process ended.
    expect(ran.sort()).toEqual(['meter', 'recording part']);
    expect(stepsDone).toBe(2);
    expect(exits).toEqual([0]);
    expect(logger.lines.map((line) => [line.level, line.msg])).toEqual([
      ['warn', "agents' shutdown had not begun after the room was gone; ending here"],
      ['error', 'a shutdown step failed'],
    ]);
    // agents reaching its callbacks late runs nothing twice.
    await ctx.runCallbacks();
    expect(ran).toHaveLength(2);
  });

  test('without the room gone it waits for agents, however long', async () => {
    const ctx = fakeContext();
    const exits: number[] = [];
    const shutdown = jobShutdown(ctx, recordingLogger(), { afterRoomMs: 20, exit: (code) => void exits.push(code) });
    let ran = 0;
    shutdown.add(() => ran++);
    await Bun.sleep(80);
    expect([ran, exits.length]).toEqual([0, 0]);
    await ctx.runCallbacks();
    expect(ran).toBe(1);
  });
});
