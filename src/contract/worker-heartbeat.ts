// What each agent worker tells the control plane twice a second (docs/api.md#internal): how
// many sessions it takes and which it runs. The control plane admits a session start only
// while some live worker has a free slot (src/workers/admission.ts), instead of opening a
// room no agent will come to; and a running session no live worker lists any more has lost
// its agent (a worker killed, a job crashed): it is dispatched again
// (src/sessions/agent-watch.ts). A worker silent for HEARTBEAT_TTL_SECONDS counts as gone.
import { type Static, Type } from '@sinclair/typebox';

export const HEARTBEAT_PATH = '/internal/workers/heartbeat';
export const HEARTBEAT_INTERVAL_SECONDS = 0.5;
/**
 * Six beats missed. Short, since a lost agent is noticed no sooner (a visitor faces a still
 * avatar meanwhile); not shorter, as a busy event loop (`--role all` under a burst of API
 * requests) held a live worker's beats back 1.6–1.9 s, and the control plane then refused
 * starts (503) and took running sessions for agentless.
 */
export const HEARTBEAT_TTL_SECONDS = 6 * HEARTBEAT_INTERVAL_SECONDS;

export const WorkerHeartbeat = Type.Object({
  /** Random per worker start: a restarted worker is a new one. */
  worker_id: Type.String({ minLength: 1, maxLength: 200 }),
  /** The name it takes dispatches under (AGENT_NAME). */
  agent_name: Type.String({ minLength: 1, maxLength: 200 }),
  /** Sessions it runs at once (AGENT_MAX_JOBS). */
  capacity: Type.Integer({ minimum: 0, maximum: 10_000 }),
  /** The rooms (session ids) of the sessions it runs: as many as its running jobs. */
  sessions: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 10_000 }),
  /** Stopping: it takes no new sessions. */
  draining: Type.Boolean(),
});
export type WorkerHeartbeat = Static<typeof WorkerHeartbeat>;
