// Jobs at the internal routes: each agent job holds a report token for its own session, and the
// door (src/auth/internal-doors.ts) admits a request under /internal/sessions/{id}/ only with
// that session's token. Here rather than in sessions/ because the features answering jobs
// (sessions' reports, tools, knowledge, recordings) all ask it which session is calling.
import { and, eq } from 'drizzle-orm';
import { RECORDING_CHUNK_MAX_BYTES } from '../contract/recordings.ts';
import type { Database } from '../db/index.ts';
import { ApiError } from '../http/errors.ts';
import { sessions } from '../sessions/schema.ts';
import { hashApiKey } from './api-keys.ts';
import { bearerToken, type InternalDoor } from './internal-doors.ts';

type SessionRow = typeof sessions.$inferSelect;

/** Sessions whose job was admitted by the door, for the route (no second lookup). */
const admittedReporters = new WeakMap<Request, SessionRow>();

/** The session a report is for, when the request holds its token: each job holds its own session's only. */
async function reportingSession(db: Database, request: Request, sessionId: string): Promise<SessionRow> {
  const token = bearerToken(request);
  // Ids are letters, digits and `_`: anything else names no session (and never reaches SQL).
  const [session] =
    token && /^\w+$/.test(sessionId)
      ? await db
          .select()
          .from(sessions)
          .where(and(eq(sessions.id, sessionId), eq(sessions.reportTokenHash, hashApiKey(token))))
      : [];
  if (!session) throw new ApiError(401, 'Unknown session or report token');
  return session;
}

/**
 * A job's routes: its reports, the webhook tools it asks us to call (src/tools), the passages it
 * retrieves (src/knowledge), its recording's chunks and parts (src/recordings: a malformed part
 * or chunk is let through to the route, which answers 422 for it).
 */
const JOB_PATH =
  /^\/internal\/sessions\/(\w+)\/(reports|tool-calls|knowledge|recording\/parts\/[^/]+\/(?:chunks\/[^/]+|done))$/;
/** A recording's chunk: the one job route whose body is media, not a report. */
const RECORDING_CHUNK_PATH = /^\/internal\/sessions\/\w+\/recording\/parts\/[^/]+\/chunks\/[^/]+$/;
/** The largest report: a transcript turn of a long reply, with room to spare. */
const REPORT_BODY_BYTES = 256 * 1024;

/** Jobs, checked before their reports are read (src/auth/internal-doors.ts). */
export function jobReportDoor(db: Database): InternalDoor {
  return {
    matches: (path) => path.startsWith('/internal/sessions/'),
    maxBodyBytes: (path) => (RECORDING_CHUNK_PATH.test(path) ? RECORDING_CHUNK_MAX_BYTES : REPORT_BODY_BYTES),
    async admit(request, path) {
      const sessionId = JOB_PATH.exec(path)?.[1];
      if (!sessionId) throw new ApiError(401, 'Unknown session or report token');
      admittedReporters.set(request, await reportingSession(db, request, sessionId));
    },
  };
}

/**
 * The session whose job sent `request`, once the door admitted it (any route behind
 * jobReportDoor: src/tools and src/knowledge answer jobs too), else looked up from its token.
 */
export async function jobSession(db: Database, request: Request, sessionId: string): Promise<SessionRow> {
  return admittedReporters.get(request) ?? (await reportingSession(db, request, sessionId));
}
