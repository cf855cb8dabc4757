// A job's shutdown work (the meter's last report, the recording's part, the avatar's stop…),
// run once. agents runs it as its shutdown callback, but only after waiting up to 15 s for the
// entry function and 60 s for AgentSession.close(); a close that hung held a test's worker stop
// past its minute on CI, and would hold a draining worker's process as long. So once the room
// is gone (and the conversation's summary written), the job gives agents a while; if agents has
// not begun the work by then, the job does it and ends its process.

import type { AgentLogger } from './logging.ts';

/** How long after its room is gone a job waits for agents to begin its shutdown work. */
export const SHUTDOWN_AFTER_ROOM_MS = 10_000;

export interface JobShutdown {
  /** Work for the job's end; added before the end comes (as agents' callbacks are). */
  add(work: () => unknown): void;
  /** The room is gone: from now on the work is done within SHUTDOWN_AFTER_ROOM_MS, by agents or here. */
  roomGone(): void;
}

export function jobShutdown(
  ctx: { addShutdownCallback(callback: () => Promise<void>): void },
  logger: AgentLogger,
  { afterRoomMs = SHUTDOWN_AFTER_ROOM_MS, exit = (code: number): void => process.exit(code) } = {},
): JobShutdown {
  const works: (() => unknown)[] = [];
  let done: Promise<void> | undefined;
  const runAll = () =>
    (done ??= Promise.allSettled(works.map((work) => Promise.resolve().then(work))).then((results) => {
      for (const result of results)
        if (result.status === 'rejected') logger.error({ err: result.reason }, 'a shutdown step failed');
    }));
  ctx.addShutdownCallback(runAll);
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    add: (work) => void works.push(work),
    roomGone() {
      timer ??= setTimeout(async () => {
        if (done !== undefined) return; // agents got there: it ends the process itself
        logger.warn({ after_ms: afterRoomMs }, "agents' shutdown had not begun after the room was gone; ending here");
        await runAll();
        exit(0);
      }, afterRoomMs);
      timer.unref?.();
    },
  };
}
