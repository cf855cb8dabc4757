// A session's transcript: turns the agent job reports as the conversation goes, read back
// through GET /v1/sessions/{id}/transcript (docs/api.md#sessions-transcript).
import { asc, eq } from 'drizzle-orm';
import type { TranscriptReport } from '../contract/index.ts';
import type { Database } from '../db/index.ts';
import { sessionTranscripts } from './schema.ts';

type ReportedTurn = Omit<TranscriptReport, 'type'>;

/** Stores a turn once: the job retries deliveries, so the same turn may arrive twice. */
export async function recordTurn(db: Database, sessionId: string, turn: ReportedTurn): Promise<void> {
  await db
    .insert(sessionTranscripts)
    .values({
      sessionId,
      turnId: turn.turn_id,
      role: turn.role,
      text: turn.text,
      language: turn.language,
      interrupted: turn.interrupted,
      orderedBy: turn.ordered_by ?? null,
      // Each kept only on the turn it belongs to.
      toolCall: turn.role === 'tool' ? (turn.tool_call ?? null) : null,
      documentIds: turn.role === 'agent' && turn.document_ids?.length ? turn.document_ids : null,
      startedAt: new Date(turn.started_at),
      endedAt: turn.ended_at ? new Date(turn.ended_at) : null,
    })
    .onConflictDoNothing({ target: [sessionTranscripts.sessionId, sessionTranscripts.turnId] });
}

export async function transcriptOf(db: Database, sessionId: string) {
  const rows = await db
    .select()
    .from(sessionTranscripts)
    .where(eq(sessionTranscripts.sessionId, sessionId))
    .orderBy(asc(sessionTranscripts.startedAt), asc(sessionTranscripts.seq));
  return {
    session_id: sessionId,
    turns: rows.map((row) => ({
      role: row.role,
      text: row.text,
      language: row.language,
      interrupted: row.interrupted,
      ordered_by: row.orderedBy,
      tool_call: row.toolCall,
      document_ids: row.documentIds,
      started_at: row.startedAt.toISOString(),
      ended_at: row.endedAt?.toISOString() ?? null,
    })),
  };
}
