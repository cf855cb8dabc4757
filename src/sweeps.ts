// The sweeps every API process runs every SESSION_SWEEP_INTERVAL_SECONDS (src/server.ts lists
// them): sessions past their time, voices no session speaks with any more, workers long gone,
// and work a dead process left behind. Each runs on its own: one that fails is logged under its
// own name, and the others still run.
import { log } from './logging/index.ts';

export interface Sweep {
  /** Its name in the log: `the <name> sweep failed`. */
  name: string;
  run(): Promise<unknown>;
}

function logFailure(name: string, error: unknown): void {
  log.error({ err: error, sweep: name }, `the ${name} sweep failed`);
}

/** Runs the sweeps one after another, each whatever became of the ones before it. */
export async function runSweeps(sweeps: readonly Sweep[], failed = logFailure): Promise<void> {
  for (const sweep of sweeps) {
    try {
      await sweep.run();
    } catch (error) {
      failed(sweep.name, error);
    }
  }
}
