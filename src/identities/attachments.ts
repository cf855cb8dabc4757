// The tools and documents an identity's agent uses (docs/api.md#identity-object: `tool_ids`,
// `document_ids`), kept in order in identity_tools / identity_documents. The same checks serve
// a session start's own lists (src/sessions/toolbox.ts). A tool or document deleted later
// drops out of every list by the tables' cascades.
import { and, asc, eq, inArray, ne } from 'drizzle-orm';
import type { Queryable } from '../db/index.ts';
import { ApiError, type FieldProblem } from '../http/errors.ts';
import { documents } from '../knowledge/schema.ts';
import { tools } from '../tools/schema.ts';
import { MAX_ATTACHED } from './contract.ts';
import { identityDocuments, identityTools } from './schema.ts';

/** The lists a request names; an absent one is left as it is (a start: the identity's). */
export interface AttachmentChange {
  tool_ids?: string[];
  document_ids?: string[];
}

export interface Attachments {
  toolIds: string[];
  documentIds: string[];
}

type ListField = 'tool_ids' | 'document_ids';

/** Where each list is kept: its link table, one row per id in the list's order. */
const LINKS = [
  {
    field: 'tool_ids',
    key: 'toolIds',
    table: identityTools,
    linked: identityTools.toolId,
    row: (identityId: string, toolId: string, position: number) => ({ identityId, toolId, position }),
  },
  {
    field: 'document_ids',
    key: 'documentIds',
    table: identityDocuments,
    linked: identityDocuments.documentId,
    row: (identityId: string, documentId: string, position: number) => ({ identityId, documentId, position }),
  },
] as const;

/**
 * A form's `tool_ids` and `document_ids`, each one JSON array of ids (absent: unchanged), and
 * what is wrong with their shape; whether the ids name anything is attachmentProblems'.
 */
export function parseIdLists(form: { tool_ids?: string; document_ids?: string }): {
  change: AttachmentChange;
  problems: FieldProblem[];
} {
  const change: AttachmentChange = {};
  const problems: FieldProblem[] = [];
  for (const field of ['tool_ids', 'document_ids'] as const) {
    const raw = form[field];
    if (raw === undefined) continue;
    const ids = parseIdList(field, raw, problems);
    if (ids) change[field] = ids;
  }
  return { change, problems };
}

function parseIdList(field: ListField, raw: string, problems: FieldProblem[]): string[] | undefined {
  const example = field === 'tool_ids' ? '["tool_…"]' : '["doc_…"]';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed)) {
    problems.push({
      loc: ['body', field],
      msg: `${field} must be one JSON array of ids, e.g. ${example}`,
      type: 'json_array_type',
    });
    return undefined;
  }
  const bad = parsed.findIndex((id) => typeof id !== 'string' || id.length < 1 || id.length > 100);
  if (bad >= 0) {
    problems.push({ loc: ['body', field, bad], msg: 'Expected an id (a string)', type: 'string_type' });
    return undefined;
  }
  return parsed as string[];
}

export const noAttachments = (): Attachments => ({ toolIds: [], documentIds: [] });

/**
 * Why a request's lists cannot be attached, one problem per bad entry: a duplicate, or an id
 * that names no tool (no usable document: a failed one cannot answer) of this account.
 */
export async function attachmentProblems(
  q: Queryable,
  accountId: string,
  change: AttachmentChange,
): Promise<FieldProblem[]> {
  const problems: FieldProblem[] = [];
  const check = async (field: 'tool_ids' | 'document_ids', ids: string[] | undefined) => {
    if (!ids) return;
    if (ids.length > MAX_ATTACHED) {
      problems.push({ loc: ['body', field], msg: `At most ${MAX_ATTACHED} ids`, type: 'too_long' });
      return;
    }
    const known = new Set(ids.length ? await existing(q, accountId, field, ids) : []);
    const what = field === 'tool_ids' ? 'tool' : 'document';
    ids.forEach((id, index) => {
      const loc = ['body', field, index];
      if (ids.indexOf(id) !== index)
        problems.push({ loc, msg: `${what} ${id.slice(0, 100)} is listed twice`, type: 'duplicate' });
      else if (!known.has(id))
        problems.push({
          loc,
          msg:
            field === 'tool_ids'
              ? `No tool ${id.slice(0, 100)} in this account`
              : `No document ${id.slice(0, 100)} in this account that can be used (one whose processing failed cannot)`,
          type: field === 'tool_ids' ? 'unknown_tool' : 'unknown_document',
        });
    });
  };
  await check('tool_ids', change.tool_ids);
  await check('document_ids', change.document_ids);
  return problems;
}

async function existing(
  q: Queryable,
  accountId: string,
  field: 'tool_ids' | 'document_ids',
  ids: string[],
): Promise<string[]> {
  if (field === 'tool_ids') {
    const rows = await q
      .select({ id: tools.id })
      .from(tools)
      .where(and(eq(tools.accountId, accountId), inArray(tools.id, ids)));
    return rows.map((row) => row.id);
  }
  const rows = await q
    .select({ id: documents.id })
    .from(documents)
    .where(and(eq(documents.accountId, accountId), inArray(documents.id, ids), ne(documents.status, 'failed')));
  return rows.map((row) => row.id);
}

/** 422 with every problem of the request's lists. */
export async function checkAttachments(q: Queryable, accountId: string, change: AttachmentChange): Promise<void> {
  const problems = await attachmentProblems(q, accountId, change);
  if (problems.length) throw new ApiError(422, problems);
}

/**
 * Checks the lists again and replaces the identity's with them, in the caller's transaction
 * (the identity's own insert or update): a refusal leaves nothing half-changed.
 */
export async function replaceAttachments(
  tx: Queryable,
  accountId: string,
  identityId: string,
  change: AttachmentChange,
): Promise<void> {
  await checkAttachments(tx, accountId, change);
  for (const link of LINKS) {
    const ids = change[link.field];
    if (!ids) continue;
    await tx.delete(link.table).where(eq(link.table.identityId, identityId));
    if (ids.length) await tx.insert(link.table).values(ids.map((id, position) => link.row(identityId, id, position)));
  }
}

export const changesAttachments = (change: AttachmentChange) =>
  change.tool_ids !== undefined || change.document_ids !== undefined;

/** Each identity's lists, in order (identities without any: empty lists). */
export async function attachmentsOf(q: Queryable, identityIds: string[]): Promise<Map<string, Attachments>> {
  const byIdentity = new Map<string, Attachments>(identityIds.map((id) => [id, noAttachments()]));
  if (!identityIds.length) return byIdentity;
  for (const link of LINKS) {
    const rows = await q
      .select({ identityId: link.table.identityId, id: link.linked })
      .from(link.table)
      .where(inArray(link.table.identityId, identityIds))
      .orderBy(asc(link.table.identityId), asc(link.table.position));
    for (const row of rows) byIdentity.get(row.identityId)?.[link.key].push(row.id);
  }
  return byIdentity;
}

export async function attachmentsOfOne(q: Queryable, identityId: string): Promise<Attachments> {
  return (await attachmentsOf(q, [identityId])).get(identityId)!;
}
