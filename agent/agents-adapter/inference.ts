// agents' inference process: one per worker, beside its job processes, running the models every
// job of the worker asks (agents' own end-of-turn model is one). Its runner registry is exported
// at run time but typed @internal; this is its one use.

import type { JobContext } from '@livekit/agents';
import * as agents from '@livekit/agents';

/** What agents' inference process makes of a registered method's module: `new` of its default export. */
export interface InferenceRunner<Input, Output> {
  initialize(): Promise<void>;
  run(data: Input): Promise<Output>;
  close(): Promise<void>;
}

interface RunnerRegistry {
  registeredRunners: Record<string, string>;
  registerRunner(method: string, importPath: string): void;
}

const registry = (agents as unknown as { InferenceRunner: RunnerRegistry }).InferenceRunner;

/**
 * Runs `method` in the inference process of every worker started from now on in this process:
 * `module` (a file URL) default-exports its runner. Once per process (a second worker, say in a
 * test, shares the registration).
 */
export function registerInferenceRunner(method: string, module: string): void {
  if (!registry.registeredRunners[method]) registry.registerRunner(method, module);
}

/** Asks the worker's inference process to run `method` on `data`. */
export function runInference<Input, Output>(
  ctx: Pick<JobContext, 'inferenceExecutor'>,
  method: string,
  data: Input,
): Promise<Output> {
  return ctx.inferenceExecutor.doInference(method, data) as Promise<Output>;
}
