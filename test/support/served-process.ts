// `likeness serve` as a deployment runs it: a process of its own on a random port, with the
// environment it is given; and an account made as an operator makes one, with the admin token
// the service wrote to its data folder. For the suites of what only a whole process shows
// (its logs, its start-up).
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { freeTcpPort } from '../../src/livekit/local-ports.ts';

const CLI = join(import.meta.dir, '../../src/cli/index.ts');

export interface ServedProcesses {
  /** Folders to remove once the processes are gone (tempDir and seededDataDir add to it). */
  dirs: string[];
  /** `likeness serve` on 127.0.0.1 with `env` beside this process's environment. */
  spawn(env: Record<string, string>): Promise<{ child: Subprocess<'ignore', 'pipe', 'pipe'>; url: string }>;
  /** Kills what is still running and removes `dirs`: a suite's afterAll. */
  stop(): Promise<void>;
}

export function servedProcesses(): ServedProcesses {
  const dirs: string[] = [];
  const children: Subprocess<'ignore', 'pipe', 'pipe'>[] = [];
  return {
    dirs,
    async spawn(env) {
      // A port the system says is free: a random one in 20,000–40,000 was at times taken (the
      // ephemeral range starts at 32,768), and the process exited before saying why (run 107).
      const port = String(await freeTcpPort('127.0.0.1'));
      const child = Bun.spawn(['bun', CLI, 'serve'], {
        env: { ...process.env, HOST: '127.0.0.1', PORT: port, ...env },
        stdin: 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
      });
      children.push(child);
      return { child, url: `http://127.0.0.1:${port}` };
    },
    async stop() {
      for (const child of children) {
        child.kill('SIGKILL');
        await child.exited;
      }
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The admin token the service wrote to its data folder at its first start. */
export async function adminTokenOf(dataDir: string): Promise<string> {
  return (await Bun.file(join(dataDir, 'admin-token')).text()).trim();
}

/** An account created through the admin API of the service at `url`, whose data folder is `dataDir`. */
export async function accountByAdmin(
  url: string,
  dataDir: string,
  body: { email: string; credits: number },
): Promise<{ account_id: string; api_key: string }> {
  const adminToken = await adminTokenOf(dataDir);
  const created = await fetch(`${url}/internal/admin/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await created.json()) as { account_id: string; api_key: string };
}
