// Loaded before every suite (bunfig.toml). Agent jobs are forked from this process and
// inherit its environment, so by default every conversation a suite starts runs against
// the wire fakes: cheap and deterministic. Suites that need the offline models run an agent
// process of their own with an environment without keys.
import { configureLogging } from '../../src/logging/index.ts';
import { type ProviderFakes, startProviderFakes } from './fakes/index.ts';

// The services the suites start in this process log only what went wrong: an access-log line
// per request would bury the test output. (Not through LOG_LEVEL: services the suites spawn
// inherit the environment, and tests wait for their `listening` line.)
configureLogging({ level: 'warn', format: 'json' });

const fakes = await startProviderFakes();
for (const [name, value] of Object.entries(fakes.env)) process.env[name] = value;

// An agent worker forks a warm job process for each of its slots, ~1.1 s of CPU each (more on
// a busy machine) and replaced after every session: job processes took a third of a run's CPU,
// a good part of it loading ones that never got a session (docs/benchmarks.md). Suites run one
// or two sessions at a time; those that fill a worker set AGENT_MAX_JOBS themselves, and
// test/avatar checks the default.
process.env.AGENT_MAX_JOBS ??= '2';

/** The fakes this process's agent jobs talk to. */
export function sharedProviderFakes(): ProviderFakes {
  return fakes;
}
