// Settings a suite puts in this process's environment, for the agent job processes the worker
// forks (they inherit it), and takes back afterwards.

/** Sets `values` in process.env; the returned function restores what was there. */
export function setProcessEnv(values: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  Object.assign(process.env, values);
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}
