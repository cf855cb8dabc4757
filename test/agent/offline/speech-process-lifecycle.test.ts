// The offline models leave no process behind: close() ends the Python speech process, and
// so does the death of the job process that started it (SIGKILL, no cleanup at all).
import { describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadOfflineModels } from '../../../agent/providers/offline/index.ts';
import { loadProviders } from '../../../src/config.ts';

/** Pids of the speech processes whose parent is `parent`. */
function speechProcessesOf(parent: number): number[] {
  const found = spawnSync('pgrep', ['-P', String(parent), '-f', 'speech_server.py'], { encoding: 'utf8' });
  return found.stdout.split('\n').filter(Boolean).map(Number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (alive(pid) && performance.now() < deadline) await Bun.sleep(50);
  // A dead child of ours stays a zombie until reaped: ask its state.
  const state = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim();
  return !alive(pid) || state.startsWith('Z');
}

describe('offline models: process lifecycle', () => {
  test('close() ends the speech process', async () => {
    const before = new Set(speechProcessesOf(process.pid));
    const models = await loadOfflineModels({ modelsDir: loadProviders(process.env).modelsDir });
    const started = speechProcessesOf(process.pid).filter((pid) => !before.has(pid));
    expect(started).toHaveLength(1);
    await models.close();
    expect(await waitUntilGone(started[0]!, 3_000)).toBe(true);
    await models.close(); // twice is harmless
  }, 120_000);

  test('the speech process exits when its job process is killed outright', async () => {
    const job = Bun.spawn([process.execPath, fileURLToPath(new URL('./load-and-wait.ts', import.meta.url))], {
      stdout: 'pipe',
      stderr: 'inherit',
      env: process.env,
    });
    try {
      const reader = job.stdout.getReader();
      let output = '';
      while (!output.includes('loaded')) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the job process exited before loading: ${output}`);
        output += new TextDecoder().decode(value);
      }
      const [speech] = speechProcessesOf(job.pid);
      expect(speech).toBeGreaterThan(0);
      job.kill('SIGKILL');
      await job.exited;
      expect(await waitUntilGone(speech!, 5_000)).toBe(true);
    } finally {
      job.kill('SIGKILL');
    }
  }, 120_000);
});
