// The suite checks real time on a two-core machine (frame rates at the visitor, billing minutes,
// replies within their waits), so another busy process beside it (a build, a second run) makes
// those checks fail for reasons of the machine, not of the code. `npm test` therefore asks the
// kernel to run it ahead of other work when it may (root or CAP_SYS_NICE): a lower nice value for
// itself and everything it starts. Without the privilege it says so and runs as before.
// LIKENESS_TEST_NICE=0 turns it off. Its autogroup is left alone: Linux shares the CPU between
// sessions' groups before nice values count, and a higher weight for this run's group would
// starve the processes it starts in sessions of their own (LiveKit, agent workers).
import { setPriority } from 'node:os';

/** The nice value asked for (−20 highest … 19 lowest); −10 weighs ~9× a default process. */
export const TEST_NICE = -10;

/** Raises this process's priority (its children inherit it); returns what took, for the log. */
export function raiseTestPriority(env = process.env) {
  const nice = env.LIKENESS_TEST_NICE === undefined ? TEST_NICE : Number(env.LIKENESS_TEST_NICE);
  if (!Number.isInteger(nice) || nice >= 0) return { nice: 0, raised: [] };
  const raised = [];
  try {
    setPriority(0, nice);
    raised.push('process');
  } catch {
    // EACCES without the privilege: the run goes on at the default priority.
  }
  return { nice, raised };
}
