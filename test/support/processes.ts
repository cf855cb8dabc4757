// Service processes started by tests: wait for what they print, with a clear error when
// they die first (a bare read loop would spin forever on a closed stream).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function readUntil(stream: ReadableStream<Uint8Array>, marker: string): Promise<string> {
  const reader = stream.getReader();
  let out = '';
  try {
    while (!out.includes(marker)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the process exited before printing "${marker}": ${out}`);
      out += new TextDecoder().decode(value);
    }
    return out;
  } finally {
    reader.releaseLock();
  }
}

/**
 * Reads and discards the rest of a child's output. A pipe nobody reads fills up, and the
 * child then blocks on its next log line (an agent worker logs while it shuts down).
 */
export function drain(stream: ReadableStream<Uint8Array>): void {
  void (async () => {
    const reader = stream.getReader();
    try {
      while (!(await reader.read()).done);
    } catch {
      // the child is gone
    }
  })();
}

/**
 * Everything a child prints on `stream` (its last `keepChars`), kept as it arrives (and read, so
 * the pipe never fills).
 */
export function collectOutput(stream: ReadableStream<Uint8Array>, keepChars = Infinity): { text(): string } {
  let text = '';
  void (async () => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read())
        text = (text + decoder.decode(read.value, { stream: true })).slice(-keepChars);
    } catch {
      // the child is gone
    }
  })();
  return { text: () => text };
}

/** A temporary folder, registered in `dirs` so the suite can remove it afterwards. */
export async function tempDir(dirs: string[], prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** This process's children, as `pid command…` lines. */
export function childProcesses(): string[] {
  return Bun.spawnSync(['pgrep', '-a', '-P', String(process.pid)])
    .stdout.toString()
    .split('\n')
    .filter(Boolean);
}

/** Pids of the job processes an in-process agent worker forked, running or warm (the inference process is not one). */
export function jobProcesses(): number[] {
  return childProcesses()
    .filter((line) => line.includes('job_proc_lazy_main'))
    .map((line) => Number(line.split(' ')[0]));
}
