// The worker's side of the adapter (agent/worker.ts, in the service's process): what it needs of
// agents' AgentServer, its process pool and the processes it forks, beyond their public API.
import { once } from 'node:events';
import type { AgentServer } from '@livekit/agents';
import { type Job, WorkerMessage, WorkerStatus } from '@livekit/protocol';
import { JOB_ENV_EXCLUDE_VARIABLE, JOB_MODELS_IN_BACKGROUND_VARIABLE } from '../../src/config.ts';

/** What the patch adds to AgentServer (index.ts, P5 and P6); agents' declarations are left as they are. */
interface PatchedServer {
  readonly launchingJobs: Job[];
  readonly warmProcesses: number;
}

function patched(server: AgentServer): PatchedServer {
  const members = server as unknown as Partial<PatchedServer>;
  if (!Array.isArray(members.launchingJobs) || typeof members.warmProcesses !== 'number')
    throw new Error(
      '@livekit/agents is installed without its patch (agent/patches; what it adds: agent/agents-adapter/index.ts); run `bun install`',
    );
  return members as PatchedServer;
}

/**
 * Resolves once the server is registered with LiveKit. `AgentServer.event` is public but
 * declares no events; agents' own CLI waits for this one the same way.
 */
export async function whenRegistered(server: AgentServer): Promise<void> {
  await once(server.event, 'worker_registered');
}

/**
 * The jobs the server accepted that do not run yet: waiting for LiveKit's assignment or for a
 * warm process (seconds, when none was). agents keeps no such list (P5).
 */
export function launchingJobs(server: AgentServer): Job[] {
  return patched(server).launchingJobs;
}

/** Job processes initialised and waiting for a job; agents' pool keeps them private (P6). */
export function warmProcesses(server: AgentServer): number {
  return patched(server).warmProcesses;
}

/**
 * Tells LiveKit at once that the server is available, at `load`: agents does so only from its
 * load loop, every 2.5 s, and offers no call for it. The message is the loop's own, sent on the
 * server's internal channel (`worker_msg`) to its LiveKit connection; the loop goes on as before.
 */
export function announceAvailable(server: AgentServer, load: number): void {
  server.event.emit(
    'worker_msg',
    new WorkerMessage({ message: { case: 'updateWorker', value: { load, status: WorkerStatus.WS_AVAILABLE } } }),
  );
}

/**
 * What the server hands the job processes it forks from now on: agents forks them (and its
 * inference process) with this process's environment, and has no option for another, nor any
 * other channel to a process before its job (its initialize request carries agents' own
 * fields). So the environment is the channel: the patch (P2, P3) leaves out of a fork's the
 * variables `excluded` names, and a job process reads `modelsInBackground` from its own
 * (job.ts: modelsInBackground()). Both are read at each fork, so they hold for later forks only.
 */
export function setJobProcessEnvironment(settings: {
  /** Variables a job process must not have (the control plane's secrets). */
  excluded?: readonly string[];
  /** Whether a job process forked from now on loads its offline models behind its first session. */
  modelsInBackground?: boolean;
}): void {
  if (settings.excluded) process.env[JOB_ENV_EXCLUDE_VARIABLE] = settings.excluded.join(',');
  if (settings.modelsInBackground) process.env[JOB_MODELS_IN_BACKGROUND_VARIABLE] = '1';
  else if (settings.modelsInBackground === false) delete process.env[JOB_MODELS_IN_BACKGROUND_VARIABLE];
}
