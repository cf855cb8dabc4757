// The agent's log, structured as the control plane's (src/logging): agents' own pino logger
// (`log()`: JSON lines at the worker's level, in the worker and in every job process), and
// child loggers carrying what a line is about as fields. A job's lines carry its session, its
// LiveKit job, its room and the participant it serves, so `grep ses_…` finds them beside the
// control plane's; messages are short and fixed, ids and errors go in fields (`err` for an error).
import { log } from '@livekit/agents';

/** One level: fields first, then a short message; or the message alone. */
export interface LogFn {
  (fields: object, message: string): void;
  (message: string): void;
}

/** What every part of the agent logs through (pino's Logger satisfies it; tests pass a recorder). */
export interface AgentLogger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  /** A logger whose every line carries `fields` as well. */
  child(fields: object): AgentLogger;
}

/** The fields of a job's lines. */
export interface JobLogFields {
  /** The session (docs/api.md#sessions), from the dispatch metadata; absent until it is read. */
  session_id?: string;
  /** LiveKit's id of the job. */
  job_id: string;
  /** The session's room (its name). */
  room: string | undefined;
  /** The participant the job serves: the session's visitor. */
  participant?: string;
}

/** The process's log: the worker's, or a job process's before it knows its session. */
export function agentLog(): AgentLogger {
  return log();
}

/** A job's logger: every line carries the job's fields. */
export function jobLogger(fields: JobLogFields): AgentLogger {
  return log().child(fields);
}
