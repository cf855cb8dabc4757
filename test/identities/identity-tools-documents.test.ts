// An identity's tools and documents (docs/api.md#identity-object): named on create and PATCH as
// one JSON array each, kept in order, shown on every read; a bad list is refused whole and
// leaves nothing behind (no identity, no link row); PATCH replaces a list and [] clears it; a
// tool or document deleted later drops out of the identity's lists.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { documents } from '../../src/knowledge/schema.ts';
import { tools } from '../../src/tools/schema.ts';
import { form, identityForm, portrait } from '../support/forms.ts';
import { ENGINES, startTestService, type TestAccount, type TestService, waitForStatus } from '../support/service.ts';
import { countRows, insertDocument, insertTool } from './attachment-rows.ts';

interface Listed {
  identity_id: string;
  name: string;
  tool_ids: string[];
  document_ids: string[];
}
interface Problem {
  loc: (string | number)[];
  type: string;
  msg: string;
}

describe.each(ENGINES)('identity tools and documents on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  let stranger: TestAccount;
  const ids = { tools: [] as string[], documents: [] as string[] };
  beforeAll(async () => {
    service = await startTestService(engine, { env: { CREDITS_ONBOARDING: '0' } });
    account = await service.account();
    stranger = await service.account();
    ids.tools = [
      await insertTool(service, account.accountId, { type: 'webhook' }),
      await insertTool(service, account.accountId, { type: 'client' }),
      await insertTool(service, account.accountId, { type: 'end_session' }),
    ];
    ids.documents = [
      await insertDocument(service, account.accountId, 'ready'),
      // Still processing: attachable; it answers once ready.
      await insertDocument(service, account.accountId, 'processing'),
    ];
  });
  afterAll(() => service.stop());

  const read = async (id: string) => (await (await account.call('GET', `/v1/identities/${id}`)).json()) as Listed;
  const patch = (id: string, fields: Record<string, string>) =>
    account.call('PATCH', `/v1/identities/${id}`, { body: form(fields) });

  test('create names them in order; GET, the list and the answer show them', async () => {
    const [webhook, client] = ids.tools;
    const created = await account.call('POST', '/v1/identities', {
      body: await identityForm({
        tool_ids: JSON.stringify([client, webhook]),
        document_ids: JSON.stringify(ids.documents),
      }),
    });
    expect(created.status).toBe(200);
    const body = (await created.json()) as Listed;
    expect(body.tool_ids).toEqual([client!, webhook!]);
    expect(body.document_ids).toEqual(ids.documents);
    expect(await read(body.identity_id)).toMatchObject({ tool_ids: [client, webhook], document_ids: ids.documents });
    const list = (await (await account.call('GET', '/v1/identities')).json()) as Listed[];
    expect(list.find((i) => i.identity_id === body.identity_id)).toMatchObject({
      tool_ids: [client, webhook],
      document_ids: ids.documents,
    });

    // Without the fields: empty lists.
    const plain = (await (
      await account.call('POST', '/v1/identities', { body: await identityForm({ name: 'Plain' }) })
    ).json()) as Listed;
    expect(plain).toMatchObject({ tool_ids: [], document_ids: [] });
  });

  test('a bad list is refused whole, at the bad entry, and nothing is kept', async () => {
    const foreignTool = await insertTool(service, stranger.accountId);
    const failed = await insertDocument(service, account.accountId, 'failed');
    const [webhook] = ids.tools;
    const before = {
      identities: await service.count('identities'),
      tools: await countRows(service, 'identity_tools'),
      documents: await countRows(service, 'identity_documents'),
    };
    const cases: { fields: Record<string, string>; loc: (string | number)[]; type?: string }[] = [
      {
        fields: { tool_ids: JSON.stringify([webhook, 'tool_nosuchtool']) },
        loc: ['body', 'tool_ids', 1],
        type: 'unknown_tool',
      },
      { fields: { tool_ids: JSON.stringify([foreignTool]) }, loc: ['body', 'tool_ids', 0], type: 'unknown_tool' },
      { fields: { tool_ids: JSON.stringify([webhook, webhook]) }, loc: ['body', 'tool_ids', 1], type: 'duplicate' },
      {
        fields: { tool_ids: JSON.stringify([webhook]), document_ids: JSON.stringify([ids.documents[0], failed]) },
        loc: ['body', 'document_ids', 1],
        type: 'unknown_document',
      },
      { fields: { tool_ids: 'tool_abc' }, loc: ['body', 'tool_ids'], type: 'json_array_type' },
      { fields: { tool_ids: JSON.stringify([webhook, 7]) }, loc: ['body', 'tool_ids', 1], type: 'string_type' },
      { fields: { document_ids: '{"a":1}' }, loc: ['body', 'document_ids'] },
      {
        fields: { tool_ids: JSON.stringify(Array.from({ length: 21 }, (_, i) => `tool_${i}`)) },
        loc: ['body', 'tool_ids'],
      },
    ];
    for (const { fields, loc, type } of cases) {
      const response = await account.call('POST', '/v1/identities', { body: await identityForm(fields) });
      const label = JSON.stringify(fields).slice(0, 80);
      expect(`${label}: ${response.status}`).toBe(`${label}: 422`);
      const problems = ((await response.json()) as { detail: Problem[] }).detail;
      const problem = problems.find((p) => JSON.stringify(p.loc) === JSON.stringify(loc));
      expect(problem ? `${label}: found` : `${label}: ${JSON.stringify(problems)}`).toBe(`${label}: found`);
      if (type) expect(problem!.type).toBe(type);
    }
    // One JSON array per field: the field repeated is refused as any repeated form field.
    const repeated = await identityForm();
    repeated.append('tool_ids', JSON.stringify([webhook]));
    repeated.append('tool_ids', JSON.stringify([webhook]));
    const twice = await account.call('POST', '/v1/identities', { body: repeated });
    expect(twice.status).toBe(422);
    expect(JSON.stringify(await twice.json())).toContain('duplicate_field');
    expect({
      identities: await service.count('identities'),
      tools: await countRows(service, 'identity_tools'),
      documents: await countRows(service, 'identity_documents'),
    }).toEqual(before);
  });

  test('PATCH replaces a list, [] clears it, an unsent one stays; a bad list changes nothing', async () => {
    const [webhook, client, endSession] = ids.tools;
    const identity = (await (
      await account.call('POST', '/v1/identities', {
        body: await identityForm({
          name: 'Patched',
          tool_ids: JSON.stringify([webhook]),
          document_ids: JSON.stringify([ids.documents[0]]),
        }),
      })
    ).json()) as Listed;

    const replaced = await patch(identity.identity_id, { tool_ids: JSON.stringify([endSession, client]) });
    expect(replaced.status).toBe(200);
    expect(await replaced.json()).toMatchObject({ tool_ids: [endSession, client], document_ids: [ids.documents[0]] });

    const cleared = await patch(identity.identity_id, { document_ids: '[]', name: 'Patched again' });
    expect(cleared.status).toBe(200);
    expect(await read(identity.identity_id)).toMatchObject({
      name: 'Patched again',
      tool_ids: [endSession, client],
      document_ids: [],
    });

    // A name and a bad list: neither is applied.
    const refused = await patch(identity.identity_id, {
      name: 'Never',
      tool_ids: JSON.stringify([webhook, 'tool_nosuchtool']),
    });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { detail: Problem[] }).detail).toContainEqual(
      expect.objectContaining({ loc: ['body', 'tool_ids', 1], type: 'unknown_tool' }),
    );
    expect(await read(identity.identity_id)).toMatchObject({
      name: 'Patched again',
      tool_ids: [endSession, client],
      document_ids: [],
    });
    // The lists alone are an update; another account's identity is not found.
    expect((await patch(identity.identity_id, { tool_ids: '[]' })).status).toBe(200);
    expect((await read(identity.identity_id)).tool_ids).toEqual([]);
    const foreign = await stranger.call('PATCH', `/v1/identities/${identity.identity_id}`, {
      body: form({ tool_ids: '[]' }),
    });
    expect(foreign.status).toBe(404);

    // Alongside a retrain (202): the lists change at once, like the text fields.
    const retrain = await account.call('PATCH', `/v1/identities/${identity.identity_id}`, {
      body: form({ prompt: 'You are Ada, retrained.', image: await portrait(), tool_ids: JSON.stringify([client]) }),
    });
    expect(retrain.status).toBe(202);
    expect(await retrain.json()).toMatchObject({ status: 'training', tool_ids: [client] });
    await waitForStatus(account, identity.identity_id, 'ready');
    expect((await read(identity.identity_id)).tool_ids).toEqual([client!]);
  });

  test('a tool or document deleted later drops out of the lists', async () => {
    const doomedTool = await insertTool(service, account.accountId);
    const doomedDocument = await insertDocument(service, account.accountId);
    const [webhook] = ids.tools;
    const identity = (await (
      await account.call('POST', '/v1/identities', {
        body: await identityForm({
          name: 'Dropping',
          tool_ids: JSON.stringify([doomedTool, webhook]),
          document_ids: JSON.stringify([doomedDocument, ids.documents[0]]),
        }),
      })
    ).json()) as Listed;
    expect(identity.tool_ids).toEqual([doomedTool, webhook!]);
    const db = service.services.database.db;
    await db.delete(tools).where(eq(tools.id, doomedTool));
    await db.delete(documents).where(eq(documents.id, doomedDocument));
    expect(await read(identity.identity_id)).toMatchObject({ tool_ids: [webhook], document_ids: [ids.documents[0]] });
    // Deleting the identity takes its links (cascade): the tools stay.
    expect((await account.call('DELETE', `/v1/identities/${identity.identity_id}`)).status).toBe(204);
    expect(await db.select({ id: tools.id }).from(tools).where(eq(tools.id, webhook!))).toHaveLength(1);
  });
});
