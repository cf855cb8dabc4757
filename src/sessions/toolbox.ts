// A session's tools and documents (docs/api.md#sessions-start: `tool_ids`, `document_ids`):
// the start's own lists, or its identity's, fixed at the start (sessions.toolIds / documentIds);
// and what the dispatch tells the job of them (src/contract/dispatch.ts), for the first job
// and for any job that takes the session over (agent-watch.ts).
import { and, eq, inArray } from 'drizzle-orm';
import type { DispatchTool } from '../contract/index.ts';
import type { Database } from '../db/index.ts';
import {
  type AttachmentChange,
  type Attachments,
  attachmentsOfOne,
  checkAttachments,
  noAttachments,
} from '../identities/index.ts';
import { documents } from '../knowledge/schema.ts';
import { tools } from '../tools/schema.ts';

/** The dispatch's tools part: never a tool's URL or secret (the job holds none). */
export interface SessionToolbox {
  tools: DispatchTool[];
  /** Where the job asks for a webhook tool's call; only with a webhook tool. */
  tool_calls_url?: string;
  /** Where the job retrieves passages; only with documents. */
  knowledge_url?: string;
}

/** The start's lists (checked: 422 with the bad entry's place), each absent one the identity's. */
export async function sessionAttachments(
  db: Database,
  accountId: string,
  identityId: string | undefined,
  request: AttachmentChange,
): Promise<Attachments> {
  await checkAttachments(db, accountId, request);
  const identity = identityId ? await attachmentsOfOne(db, identityId) : noAttachments();
  return {
    toolIds: request.tool_ids ?? identity.toolIds,
    documentIds: request.document_ids ?? identity.documentIds,
  };
}

/**
 * The session's tools as the job gets them, in the session's order; a tool deleted since is
 * left out, and without a document left there is nothing to retrieve from.
 */
export async function sessionToolbox(
  db: Database,
  session: { id: string; accountId: string; toolIds: string[]; documentIds: string[] },
  internalUrl: string,
): Promise<SessionToolbox> {
  const rows = session.toolIds.length
    ? await db
        .select()
        .from(tools)
        .where(and(eq(tools.accountId, session.accountId), inArray(tools.id, session.toolIds)))
    : [];
  const byId = new Map(rows.map((row) => [row.id, row]));
  const dispatched: DispatchTool[] = session.toolIds.flatMap((id) => {
    const row = byId.get(id);
    if (!row) return [];
    return [
      {
        tool_id: row.id,
        name: row.name,
        description: row.description,
        type: row.type,
        parameters: row.parameters,
        timeout_ms: row.timeoutMs,
      },
    ];
  });
  const documentsLeft = session.documentIds.length
    ? await db
        .select({ id: documents.id })
        .from(documents)
        .where(and(eq(documents.accountId, session.accountId), inArray(documents.id, session.documentIds)))
    : [];
  const base = `${internalUrl}/internal/sessions/${session.id}`;
  return {
    tools: dispatched,
    ...(dispatched.some((tool) => tool.type === 'webhook') && { tool_calls_url: `${base}/tool-calls` }),
    ...(documentsLeft.length > 0 && { knowledge_url: `${base}/knowledge` }),
  };
}
