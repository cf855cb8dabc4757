// What every API process does on a timer: the sweeps, every SESSION_SWEEP_INTERVAL_SECONDS
// (sessions past their time, summaries never written, voices no session speaks with any more,
// workers long gone, documents whose processor died, work a dead process left behind, identities
// trained by an older training), the recordings' sweep on its own timer
// (RECORDING_SWEEP_INTERVAL_SECONDS), and the agent watch, four times a second. Each sweep runs on
// its own: one that fails is logged under its own name, and the others still run.
import type { Config } from './config.ts';
import type { Database } from './db/index.ts';
import { log } from './logging/index.ts';
import { giveUpOnOutcomes } from './outcomes/index.ts';
import { giveUpOnSummaries } from './sessions/summary.ts';
import { forgetStaleVisitors } from './visitors/index.ts';
import { forgetGoneWorkers } from './workers/index.ts';

/** How often every API process looks for sessions that lost their agent: a small share of the failover's few seconds. */
const AGENT_WATCH_INTERVAL_MS = 250;

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

/** What the periodic work calls: the service's parts (src/server.ts `Services`), as far as it needs them. */
export interface PeriodicParts {
  database: { db: Database };
  lifecycle: { sweep(): Promise<unknown> };
  voices: { releaseUnused(): Promise<unknown> };
  knowledge: { sweep(): Promise<unknown> };
  trainingUpgrades: { sweep(): Promise<unknown> };
  /** Recordings to join or to expire (src/recordings), on their own timer: a join may take a while. */
  recordings: { sweep(): Promise<unknown> };
  agentWatch: { tick(): Promise<unknown> };
}

/** Starts the sweeps and the agent watch; `recovery` finishes the work of processes that died. */
export function startPeriodicWork(
  services: PeriodicParts,
  config: Config,
  work: { recovery: () => Promise<unknown> },
): { stop(): void } {
  const sweeps: Sweep[] = [
    { name: 'session', run: () => services.lifecycle.sweep() },
    { name: 'summary', run: () => giveUpOnSummaries(services.database.db) },
    { name: 'outcome', run: () => giveUpOnOutcomes(services.database.db) },
    { name: 'visitor', run: () => forgetStaleVisitors(services.database.db, config.sessions.visitorMemoryDays) },
    { name: 'voice', run: () => services.voices.releaseUnused() },
    { name: 'worker', run: () => forgetGoneWorkers(services.database.db) },
    { name: 'document', run: () => services.knowledge.sweep() },
    // Work another process left behind when it died (its lease ran out) is finished here.
    { name: 'recovery', run: work.recovery },
    // Last: identities trained by an older training version, after anything more urgent.
    { name: 'training upgrade', run: () => services.trainingUpgrades.sweep() },
  ];
  const sweeper = setInterval(() => void runSweeps(sweeps), config.sessions.sweepIntervalSeconds * 1000);
  const recordingSweeper = setInterval(
    () => void runSweeps([{ name: 'recording', run: () => services.recordings.sweep() }]),
    config.recordings.sweepIntervalSeconds * 1000,
  );
  // Only with the workers' heartbeats can a lost agent be told from a live one.
  let watching = false;
  const agentWatch =
    config.sessions.admission === 'workers'
      ? setInterval(() => {
          if (watching) return;
          watching = true;
          void services.agentWatch
            .tick()
            .catch((e) => log.error({ err: e }, 'the agent watch failed'))
            .finally(() => (watching = false));
        }, AGENT_WATCH_INTERVAL_MS)
      : undefined;
  return {
    stop() {
      clearInterval(sweeper);
      clearInterval(recordingSweeper);
      clearInterval(agentWatch);
    },
  };
}
