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

// Agent workers the suites start, in this process or as `likeness serve`, take two sessions
// unless a suite says otherwise (AGENT_MAX_JOBS), not this machine's three: every slot is a
// job process forked and loaded when the worker starts (~1.7 s of CPU), and suites run one
// session at a time (docs/testing.md).
process.env.AGENT_MAX_JOBS ??= '2';

const fakes = await startProviderFakes();
for (const [name, value] of Object.entries(fakes.env)) process.env[name] = value;

/** The fakes this process's agent jobs talk to. */
export function sharedProviderFakes(): ProviderFakes {
  return fakes;
}
