// Tools and documents written straight into the database, as /v1/tools and /v1/documents would
// keep them: the identity and session suites attach them without depending on those routes.
import { sql } from 'drizzle-orm';
import { newId, randomBase62 } from '../../src/db/ids.ts';
import type { DocumentStatus } from '../../src/knowledge/schema.ts';
import { documents } from '../../src/knowledge/schema.ts';
import { tools } from '../../src/tools/schema.ts';
import type { TestService } from '../support/service.ts';

export const WEBHOOK_URL = 'https://crm.example.com/likeness/tools';
export const WEBHOOK_SECRET = 'whsec_plumbingSecretNeverDispatched';

export async function insertTool(
  service: TestService,
  accountId: string,
  fields: { name?: string; type?: 'webhook' | 'client' | 'end_session' } = {},
): Promise<string> {
  const id = newId('tool');
  const type = fields.type ?? 'webhook';
  await service.services.database.db.insert(tools).values({
    id,
    accountId,
    name: fields.name ?? `tool_${randomBase62(8).toLowerCase()}`,
    description: 'Looks up an order by its number.',
    type,
    parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
    url: type === 'webhook' ? WEBHOOK_URL : null,
    timeoutMs: 4_000,
    secret: type === 'webhook' ? WEBHOOK_SECRET : null,
  });
  return id;
}

export async function insertDocument(
  service: TestService,
  accountId: string,
  status: DocumentStatus = 'ready',
): Promise<string> {
  const id = newId('doc');
  await service.services.database.db.insert(documents).values({
    id,
    accountId,
    name: 'returns.md',
    contentType: 'text/markdown',
    bytes: 1200,
    status,
    detail: status === 'failed' ? 'The file holds no text' : null,
  });
  return id;
}

/** Rows of a table (for "nothing was added" assertions on the link tables). */
export async function countRows(service: TestService, table: 'identity_tools' | 'identity_documents' | 'sessions') {
  const result = await service.services.database.db.execute(sql.raw(`select count(*)::int as n from ${table}`));
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { n: number }[];
  return rows[0]!.n;
}
