// A command run to its end, with everything it printed: the suites that check a tool's verdict
// (biome, dependency-cruiser, the operator CLI, espeak-ng) read its exit code and both streams.
export interface CommandOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** What the command reads on stdin (default: nothing). */
  stdin?: Blob;
}

export interface CommandResult<Out> {
  code: number;
  stdout: Out;
  stderr: string;
}

/** Runs `argv` and waits for it to exit; stdout as bytes (a WAV, say). */
export async function runCommandForBytes(
  argv: string[],
  { cwd, env, stdin }: CommandOptions = {},
): Promise<CommandResult<Uint8Array>> {
  const child = Bun.spawn(argv, { cwd, env, stdin: stdin ?? 'ignore', stdout: 'pipe', stderr: 'pipe' });
  // Both pipes read at once: a child that fills the one nobody reads would block.
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).bytes(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}

/** Runs `argv` and waits for it to exit; stdout as text. */
export async function runCommand(argv: string[], options: CommandOptions = {}): Promise<CommandResult<string>> {
  const { code, stdout, stderr } = await runCommandForBytes(argv, options);
  return { code, stdout: new TextDecoder().decode(stdout), stderr };
}
