// An agent worker in a process of its own (`likeness serve --role agent`), as a deployment runs
// it, in a process group of its own (setsid): killing the group takes its job processes too,
// as a machine or container dying would.

import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { collectOutput, readUntil, tempDir } from './processes.ts';

const CLI = join(import.meta.dir, '../../src/cli/index.ts');

export interface AgentProcess {
  child: Subprocess<'ignore', 'pipe', 'pipe'>;
  /** The id its heartbeats carry (sessions.agent_worker_id). */
  workerId: string;
  /** SIGKILL to the worker and every job process it forked. */
  kill(): void;
  /** SIGTERM, then waits for it to exit. */
  stop(): Promise<void>;
  /** What it printed lately (stdout, then stderr): for a failure to say what the worker saw. */
  output(): string;
}

export interface AgentProcessOptions {
  livekit: { url: string; apiKey: string; apiSecret: string };
  /** Where it reports its heartbeats (the control plane, or a load balancer in front of several). */
  internalUrl: string;
  /** Folders to delete after the suite. */
  dirs: string[];
  env?: Record<string, string>;
}

export async function startAgentProcess({
  livekit,
  internalUrl,
  dirs,
  env = {},
}: AgentProcessOptions): Promise<AgentProcess> {
  const child = Bun.spawn(['setsid', 'bun', CLI, 'serve', '--role', 'agent'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      LIVEKIT_URL: livekit.url,
      LIVEKIT_API_KEY: livekit.apiKey,
      LIVEKIT_API_SECRET: livekit.apiSecret,
      INTERNAL_URL: internalUrl,
      DATA_DIR: await tempDir(dirs, 'likeness-agent-process-'),
      ...env,
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  // Its errors go to stderr: a process that dies before it registers says why in the failure.
  const errors = collectOutput(child.stderr);
  const printed = await readUntil(child.stdout, 'agent worker registered').catch(async (error: Error) => {
    throw new Error(`${error.message}\nexit code ${await child.exited}; stderr: ${errors.text().slice(-2_000)}`);
  });
  const printedSince = collectOutput(child.stdout, 100_000);
  const workerId = /"worker_id":"([^"]+)"/.exec(printed)?.[1];
  if (!workerId) throw new Error(`the agent process printed no worker id: ${printed}`);
  return {
    child,
    workerId,
    kill() {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
    async stop() {
      child.kill('SIGTERM');
      await child.exited;
    },
    output: () => `${printedSince.text()}\n--- stderr ---\n${errors.text().slice(-20_000)}`,
  };
}
