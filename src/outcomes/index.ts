// A session's outcome (docs/api.md#outcomes): the fields the conversation achieved, in the shape
// the customer's `outcome_schema` gives. The agent job writes it with the session's language
// model once the session ended and reports it (src/contract/job-reports.ts OutcomeReport); here
// it is checked against the schema, stored, announced with the `session.outcome_ready` webhook,
// and given up on when it does not come. Like the summary, the ending never waits for it.
import { sql } from 'drizzle-orm';
import { type OutcomeReport, outcomeFields } from '../contract/index.ts';
import type { Database, Queryable } from '../db/index.ts';
import { sessions } from '../sessions/schema.ts';
import { writeEvent } from '../webhooks/index.ts';
import { outcomeMismatch } from './schema-rules.ts';
import { giveUpPending, pendingAtEnd, storeWritten, type WrittenAfterEnd } from './written-after-end.ts';

export { MUSEUM_OUTCOME_SCHEMA } from './contract.ts';
export { outcomeSchemaFormField, outcomeSchemaProblems } from './schema-rules.ts';
export { giveUpPending, pendingAtEnd, storeWritten, type WrittenAfterEnd } from './written-after-end.ts';

type SessionRow = typeof sessions.$inferSelect;

/** An outcome not reported this long after the end is given up on (the job died, or was stopped first). */
export const OUTCOME_WAIT_SECONDS = 180;
export const OUTCOME_GIVEN_UP_DETAIL = 'the agent ended before writing it';

const OUTCOME: WrittenAfterEnd = {
  noun: 'outcome',
  status: sessions.outcomeStatus,
  failed: (detail) => ({ outcomeStatus: 'failed', outcomeDetail: detail }),
  waitSeconds: OUTCOME_WAIT_SECONDS,
  givenUpDetail: OUTCOME_GIVEN_UP_DETAIL,
  announce,
};

/**
 * Spread into the ending's `set`: a session with an outcome schema that had a visitor turn waits
 * for its outcome (`pending`); one whose outcome came already keeps it.
 */
export function outcomeAtEnd() {
  return {
    outcomeStatus: pendingAtEnd(sessions.outcomeStatus, sql`${sessions.outcomeSchema} is not null`),
  };
}

/** In the ending's transaction, after `session.ended`: an outcome that arrived before is announced now. */
export async function announceOutcomeAtEnd(tx: Queryable, ended: SessionRow): Promise<void> {
  if (ended.outcomeStatus === 'ready' && ended.outcome) await announce(tx, ended);
}

/**
 * Stores the job's outcome report, once checked against the session's schema (a job is trusted
 * with its session, not with the customer's systems: values outside the schema are refused as a
 * failure). Settles as the summary does (src/sessions/summary.ts): the newest report while the
 * session runs, the first one after its end.
 */
export async function recordOutcome(db: Database, session: SessionRow, report: OutcomeReport): Promise<void> {
  if (!session.outcomeSchema) return; // no outcome was asked for: nothing to keep
  const mismatch = report.values ? outcomeMismatch(session.outcomeSchema, report.values) : undefined;
  const ready = report.values !== null && mismatch === undefined;
  const values = {
    // In the schema's order of fields, whatever the model's.
    outcome: ready
      ? Object.fromEntries(outcomeFields(session.outcomeSchema).map(({ name }) => [name, report.values![name]]))
      : null,
    outcomeStatus: ready ? ('ready' as const) : ('failed' as const),
    outcomeDetail: ready ? null : (mismatch ?? report.detail ?? 'the language model wrote no outcome').slice(0, 500),
  };
  await storeWritten(db, OUTCOME, session.id, values, { ready, detail: values.outcomeDetail });
}

/** Pending outcomes of sessions that ended more than OUTCOME_WAIT_SECONDS ago fail (a sweep). */
export function giveUpOnOutcomes(db: Database, now = new Date()): Promise<number> {
  return giveUpPending(db, OUTCOME, now);
}

async function announce(tx: Queryable, session: SessionRow): Promise<void> {
  await writeEvent(tx, session.accountId, 'session.outcome_ready', {
    session_id: session.id,
    identity_id: session.identityId,
    outcome: session.outcome!,
  });
}
