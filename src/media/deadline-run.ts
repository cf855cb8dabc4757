// ffmpeg and ffprobe, run as child processes that cannot hang the caller: killed at a deadline.
// The uploads' decoding (audio.ts) and the recordings' joining (src/recordings/media-join.ts).

/** How a child ended: its exit code, its whole output and error text, and whether the deadline killed it. */
export interface ChildEnd {
  exitCode: number;
  stdout: ArrayBuffer;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs `args` in `cwd` with an empty environment (the child needs nothing of the service's, its
 * secrets least of all) and no input, SIGKILLed if it runs past `timeoutMs`.
 */
export async function runWithDeadline(args: string[], cwd: string, timeoutMs: number): Promise<ChildEnd> {
  const child = Bun.spawn(args, { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', env: {}, cwd });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  const [exitCode, stdout, stderr] = await Promise.all([
    child.exited,
    new Response(child.stdout).arrayBuffer(),
    new Response(child.stderr).text(),
  ]).finally(() => clearTimeout(timer));
  return { exitCode, stdout, stderr, timedOut };
}
