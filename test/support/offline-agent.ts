// A control plane (PGlite unless told Postgres, the local LiveKit) with an agent worker in a process of its own and
// no provider key in its environment, so the offline models listen, answer and speak: what the
// conversation suites on the offline models share.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { collectOutput, readUntil, tempDir } from './processes.ts';
import { startTestService, type TestAccount, type TestService } from './service.ts';

const CLI = join(import.meta.dir, '../../src/cli/index.ts');
/** Every provider variable: none reaches the worker, so each part is the offline one. */
const PROVIDER_KEYS = [
  'DEEPGRAM_API_KEY',
  'DEEPGRAM_BASE_URL',
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'ELEVENLABS_API_KEY',
  'ELEVENLABS_BASE_URL',
];

export interface OfflineAgentService {
  service: TestService;
  /** An account with 10,000 credits and no onboarding charge. */
  account: TestAccount;
  /** What the worker (and its job processes) printed so far. */
  agentOutput(): string;
  /** Runs `step`; if it throws, the error carries the end of the worker's log (what CI shows). */
  explained<T>(step: () => Promise<T>): Promise<T>;
  /**
   * Stops the worker and the control plane. `jobs: 'kill'` ends the worker and its job processes
   * at once, for a suite done with its sessions whose jobs may still be writing their summary and
   * memory (a SIGTERM gives them AGENT_DRAIN_SECONDS and then their shutdown: past a hook's minute).
   */
  stop(options?: { jobs?: 'finish' | 'kill' }): Promise<void>;
}

/**
 * `env`: the control plane's own settings beside the defaults (e.g. a recording's wait);
 * `engine`: its database, PGlite by default; `maxJobs`: the worker's slots (2 by default).
 */
export async function startOfflineAgentService(
  name: string,
  options: { env?: Record<string, string>; engine?: 'pglite' | 'postgres'; maxJobs?: number } = {},
): Promise<OfflineAgentService> {
  const dirs: string[] = [];
  const service = await startTestService(options.engine ?? 'pglite', {
    livekit: 'local',
    env: { CREDITS_ONBOARDING: '0', ...options.env },
  });
  const account = await service.account({ credits: 10_000 });
  const { livekit } = service.services;
  const env: Record<string, string | undefined> = {
    ...process.env,
    HOST: '127.0.0.1',
    LIVEKIT_URL: livekit.url,
    LIVEKIT_API_KEY: livekit.apiKey,
    LIVEKIT_API_SECRET: livekit.apiSecret,
    DATA_DIR: await tempDir(dirs, `likeness-${name}-`),
    INTERNAL_URL: service.url,
    // The suites run one session at a time: a second warm process has the next one's models
    // loaded; a third (this machine's default) would only load them beside the first.
    AGENT_MAX_JOBS: String(options.maxJobs ?? 2),
  };
  for (const key of PROVIDER_KEYS) delete env[key];
  const agent: Subprocess<'ignore', 'pipe', 'pipe'> = Bun.spawn(['bun', CLI, 'serve', '--role', 'agent'], {
    env,
    stdout: 'pipe',
    stderr: 'pipe',
  });
  await readUntil(agent.stdout, 'agent worker registered');
  const output = [collectOutput(agent.stdout), collectOutput(agent.stderr)];
  return {
    service,
    account,
    agentOutput: () => output.map((log) => log.text()).join('\n'),
    async explained(step) {
      try {
        return await step();
      } catch (error) {
        const log = output.map((out) => out.text()).join('\n');
        if (error instanceof Error) error.message += `\nthe agent worker's log, its end:\n${log.slice(-6000)}`;
        throw error;
      }
    },
    async stop({ jobs = 'finish' } = {}) {
      if (jobs === 'kill') {
        // Every process under the worker (job processes, their speech servers), found before any
        // is killed: once a parent is gone its children are no longer listed under it.
        const tree = [agent.pid];
        for (let i = 0; i < tree.length; i++)
          for (const line of Bun.spawnSync(['pgrep', '-P', String(tree[i])])
            .stdout.toString()
            .split('\n'))
            if (line) tree.push(Number(line));
        for (const pid of tree) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      } else agent.kill('SIGTERM');
      await agent.exited;
      await service.stop();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    },
  };
}
