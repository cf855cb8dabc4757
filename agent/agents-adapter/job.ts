// The job process's side of the adapter (agent/job.ts): what it learns from its worker beyond
// agents' public API, by reading agents' IPC messages and the environment it was forked with.
import { JOB_MODELS_IN_BACKGROUND_VARIABLE } from '../../src/config.ts';

let listening = false;
let prewarming = true;
let stopRequested = false;
const stopListeners: (() => void)[] = [];

/** agents' IPC message from the worker asking the job process to stop (the worker is stopping). */
function isShutdownRequest(message: unknown): boolean {
  return (message as { case?: unknown } | null)?.case === 'shutdownRequest';
}

/**
 * Listens to the worker's messages beside agents (once, from the job module's import; nothing
 * in a process that was not forked by a worker). Two things agents 1.9 does not tell:
 *
 * - A shutdown request during prewarm: agents listens for it only once prewarm is over, so one
 *   sent while this process was still loading was lost, and the worker waited its whole
 *   shutdown timeout (15 s) before killing it; every stop of the service paid that. With no job
 *   yet there is nothing to finish: the process exits at once (until prewarmDone()).
 * - Why the job ends: its shutdown callbacks get no reason, and a shutdown request is the one
 *   reason that leaves a session going on (stoppedByWorker()).
 *
 * Shown by test/agent/worker-runs-sessions.test.ts (a worker stopped while its process loads
 * stops at once) and test/agent/drain.test.ts (a drained job's session moves to another worker).
 */
export function listenToWorker(): void {
  if (listening || !process.send) return;
  listening = true;
  process.on('message', (message: unknown) => {
    if (!isShutdownRequest(message)) return;
    stopRequested = true;
    if (prewarming) process.exit(0);
    for (const listener of stopListeners.splice(0)) listener();
  });
}

/**
 * Called once when the worker asks this job to stop, as the request arrives: agents runs the
 * job's shutdown callbacks only after the entry function, the session's close and the room's
 * disconnect (seconds; up to 15 + 60 s), which a session moving to another worker need not wait for.
 */
export function onStopRequested(listener: () => void): void {
  if (stopRequested) listener();
  else stopListeners.push(listener);
}

/** Prewarm is over: from here agents' own handler takes the shutdown request (it is added right after). */
export function prewarmDone(): void {
  prewarming = false;
}

/**
 * Whether the worker asked this job to stop (it is stopping: drained, or shut down). A job ends
 * for other reasons too (its room closed, the visitor left); only this one leaves a session
 * that goes on, which the control plane must move to another worker or end.
 */
export function stoppedByWorker(): boolean {
  return stopRequested;
}

/**
 * Whether this process was forked to take a job at once and load its offline models behind its
 * first session's face (a replacement forked once the worker was warm); the worker says so in
 * the environment it forks with (worker.ts: setJobProcessEnvironment).
 */
export function modelsInBackground(): boolean {
  return Boolean(process.env[JOB_MODELS_IN_BACKGROUND_VARIABLE]);
}
