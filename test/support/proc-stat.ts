// /proc/<pid>/stat for the suites that look at processes: "pid (comm) state ppid …", where the
// command may hold spaces and parentheses, so the fields are read after its last ')'.
import { readFileSync } from 'node:fs';

/**
 * The fields after the command, from `path` (`/proc/<pid>/stat` or a task's): [0] state,
 * [1] ppid, [11] utime, [12] stime (clock ticks), [16] nice. Throws when the process is gone.
 */
export function statFields(path: string): string[] {
  const stat = readFileSync(path, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
