// How many sessions run on this machine, across every job process and worker on it: each
// session's process leaves a file named by its pid in one folder while it serves. The offline
// reply model reads the count before each reply (two threads when it has the cores to itself,
// one otherwise: llama.cpp's threads spin-wait for each other, and on oversubscribed cores two
// replies at two threads each took 3.3–3.7 s to their first clause instead of 0.36 s at one).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

/** The folder of the machine's session files (one per serving process, named by its pid). */
export const SESSIONS_HERE_DIR = join(tmpdir(), 'likeness-sessions');

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}

/**
 * Counts this process among the machine's sessions until the returned function is called (or
 * the process exits). A process killed outright leaves its file: `sessionsHere` skips and removes it.
 */
export function joinSessionsHere(dir = SESSIONS_HERE_DIR): () => void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, String(process.pid));
  writeFileSync(file, '');
  const leave = () => {
    rmSync(file, { force: true });
    process.off('exit', leave);
  };
  process.on('exit', leave);
  return leave;
}

/** The sessions running on this machine now, this process's included when it serves one. */
export function sessionsHere(dir = SESSIONS_HERE_DIR): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let count = 0;
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    if (isAlive(pid)) count++;
    else rmSync(join(dir, name), { force: true });
  }
  return count;
}

/**
 * Threads for the offline reply about to start: two while every session on the machine has two
 * cores (this one alone on a 2-core machine), else one. A session's face and video take ~half a
 * core, and Piper speaks the first clause while the model writes the next.
 */
export function replyThreadsHere(cores = availableParallelism(), dir = SESSIONS_HERE_DIR): number {
  return Math.max(1, sessionsHere(dir)) * 2 <= cores ? 2 : 1;
}
