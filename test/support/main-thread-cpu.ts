// The CPU time this process's main thread has used, from /proc: what a held event loop costs.
// A request's wall time on a loaded machine is also the time the host did not run the process;
// the main thread's CPU during it is the part this process's own work held the loop.
import { statFields } from './proc-stat.ts';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** Milliseconds of CPU (user + system) the main thread has used, or undefined without /proc. */
export function mainThreadCpuMs(): number | undefined {
  try {
    const fields = statFields(`/proc/self/task/${process.pid}/stat`);
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}
