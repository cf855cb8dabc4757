// /v1/tools (issue 33 point 1; docs/api.md#tools) on both engines: a customer's tools made,
// listed in pages, read, changed and deleted; every refusal in the error shape, naming the
// field (and inside `parameters`, the keyword) at fault; a webhook tool's secret shown once;
// the console's twin; an identity's link to a deleted tool gone with it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { identities, identityTools } from '../../src/identities/schema.ts';
import type { StoredImage } from '../../src/media/stored.ts';
import { ConsoleClient, uniqueEmail } from '../console/support.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { json } from '../support/webhooks.ts';

interface Tool {
  tool_id: string;
  name: string;
  description: string;
  type: string;
  parameters: Record<string, unknown>;
  url: string | null;
  timeout_ms: number;
  created_at: string;
  updated_at: string;
  secret?: string;
}
type Problems = { detail: { loc: (string | number)[]; msg: string; type: string }[] };

const PUBLIC_URL = 'https://tools.example.com/likeness';
const WEATHER = {
  type: 'object',
  properties: {
    city: { type: 'string', description: 'The city', minLength: 1, maxLength: 100 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    tags: { type: 'array', items: { type: 'string' } },
    where: {
      type: 'object',
      properties: { lat: { type: 'number' }, lon: { type: 'number' } },
      required: ['lat', 'lon'],
      additionalProperties: false,
    },
  },
  required: ['city'],
  additionalProperties: false,
};
const MAX_TOOLS = 6;

describe.each(ENGINES)('tools on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;

  beforeAll(async () => {
    service = await startTestService(engine, {
      env: { TOOLS_MAX_PER_ACCOUNT: String(MAX_TOOLS) },
      overrides: {
        // No DNS in tests: one name public, one private.
        webhookResolver: async (host) => {
          if (host === 'tools.example.com') return ['93.184.216.34'];
          if (host === 'intranet.example.com') return ['10.1.2.3'];
          throw new Error('no such host');
        },
      },
    });
    account = await service.account();
  });
  afterAll(() => service?.stop());

  const create = (body: Record<string, unknown>, who: TestAccount = account) =>
    who.call('POST', '/v1/tools', json(body));
  const webhookTool = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    type: 'webhook',
    description: 'Look up the weather',
    parameters: WEATHER,
    url: PUBLIC_URL,
    ...extra,
  });
  /** The 422's problems as `loc joined: type`. */
  const problemsOf = async (answer: Response) => {
    expect(answer.status).toBe(422);
    return ((await answer.json()) as Problems).detail.map((p) => `${p.loc.join('.')}: ${p.type}`);
  };
  const refusedParameters = async (parameters: unknown) =>
    problemsOf(await create(webhookTool('bad_schema', { parameters })));

  test('a webhook tool: created with its secret shown once, then read, listed and changed without it', async () => {
    const answer = await create(webhookTool('get_weather', { timeout_ms: 3000 }));
    expect(answer.status).toBe(201);
    const created = (await answer.json()) as Tool;
    expect(created).toMatchObject({
      name: 'get_weather',
      type: 'webhook',
      description: 'Look up the weather',
      parameters: WEATHER,
      url: PUBLIC_URL,
      timeout_ms: 3000,
    });
    expect(created.tool_id).toMatch(/^tool_\w{22}$/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret!.slice(6), 'base64')).toHaveLength(32);

    const read = (await (await account.call('GET', `/v1/tools/${created.tool_id}`)).json()) as Tool;
    const { secret: _, ...withoutSecret } = created;
    expect(read).toEqual(withoutSecret);
    const listed = (await (await account.call('GET', '/v1/tools')).json()) as Tool[];
    expect(listed.find((t) => t.tool_id === created.tool_id)).toEqual(withoutSecret);
    expect(JSON.stringify(listed)).not.toContain('whsec_');

    const patched = await account.call(
      'PATCH',
      `/v1/tools/${created.tool_id}`,
      json({ name: 'weather_today', description: 'Today only', timeout_ms: 10_000 }),
    );
    expect(patched.status).toBe(200);
    const changed = (await patched.json()) as Tool;
    expect(changed).toMatchObject({ name: 'weather_today', description: 'Today only', timeout_ms: 10_000 });
    expect(changed.secret).toBeUndefined();
    expect(Date.parse(changed.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    expect((await account.call('DELETE', `/v1/tools/${created.tool_id}`)).status).toBe(204);
    expect((await account.call('GET', `/v1/tools/${created.tool_id}`)).status).toBe(404);
    expect((await account.call('DELETE', `/v1/tools/${created.tool_id}`)).status).toBe(404);
  });

  test('client and end_session tools: no url, no secret; end_session needs nothing but its name', async () => {
    const client = await create({ name: 'show_map', type: 'client', description: 'Show a map on the screen' });
    expect(client.status).toBe(201);
    const clientTool = (await client.json()) as Tool;
    expect(clientTool).toMatchObject({
      type: 'client',
      url: null,
      timeout_ms: 5000,
      parameters: { type: 'object', properties: {} },
    });
    expect(clientTool.secret).toBeUndefined();
    const end = (await (await create({ name: 'hang_up', type: 'end_session' })).json()) as Tool;
    expect(end).toMatchObject({
      type: 'end_session',
      url: null,
      parameters: { type: 'object', properties: {} },
      description: 'End the conversation when the visitor says goodbye or asks to stop',
    });
    expect(end.secret).toBeUndefined();
    // A url is a webhook's only; the type never changes.
    expect(
      await problemsOf(await create({ name: 'x_client', type: 'client', description: 'd', url: PUBLIC_URL })),
    ).toEqual(['body.url: unsupported_field']);
    expect(
      await problemsOf(await account.call('PATCH', `/v1/tools/${end.tool_id}`, json({ url: PUBLIC_URL }))),
    ).toEqual(['body.url: unsupported_field']);
    expect(
      await problemsOf(await account.call('PATCH', `/v1/tools/${clientTool.tool_id}`, json({ type: 'webhook' }))),
    ).toEqual(['body.type: immutable_field']);
    for (const tool of [clientTool, end]) await account.call('DELETE', `/v1/tools/${tool.tool_id}`);
  });

  test('names: the pattern, and unique in the account (409), also when renaming', async () => {
    for (const name of ['Get_weather', '1tool', 'get-weather', '', 'a'.repeat(65), 'get weather'])
      expect(await problemsOf(await create(webhookTool(name)))).toEqual(['body.name: string_pattern_mismatch']);
    const first = (await (await create(webhookTool('lookup'))).json()) as Tool;
    const duplicate = await create({ name: 'lookup', type: 'client', description: 'again' });
    expect(duplicate.status).toBe(409);
    expect(((await duplicate.json()) as { detail: string }).detail).toContain('lookup');
    const second = (await (await create(webhookTool('lookup_two'))).json()) as Tool;
    const rename = await account.call('PATCH', `/v1/tools/${second.tool_id}`, json({ name: 'lookup' }));
    expect(rename.status).toBe(409);
    // Another account may use the name.
    const other = await service.account();
    expect((await create(webhookTool('lookup'), other)).status).toBe(201);
    expect((await other.call('GET', `/v1/tools/${first.tool_id}`)).status).toBe(404);
    expect((await other.call('DELETE', `/v1/tools/${first.tool_id}`)).status).toBe(404);
    for (const tool of [first, second]) await account.call('DELETE', `/v1/tools/${tool.tool_id}`);
  });

  test('description, url and timeout: each refusal names its field', async () => {
    expect(await problemsOf(await create(webhookTool('t1', { description: undefined })))).toEqual([
      'body.description: missing',
    ]);
    expect(await problemsOf(await create(webhookTool('t1', { description: '   ' })))).toEqual([
      'body.description: string_blank',
    ]);
    expect(await problemsOf(await create(webhookTool('t1', { description: 'd'.repeat(1001) })))).toEqual([
      'body.description: string_too_long',
    ]);
    expect(await problemsOf(await create({ name: 't1', type: 'client' }))).toEqual(['body.description: missing']);
    expect(await problemsOf(await create(webhookTool('t1', { url: undefined })))).toEqual(['body.url: missing']);
    for (const url of [
      'http://127.0.0.1:8080/tool',
      'http://[::1]/tool',
      'http://169.254.169.254/latest/meta-data',
      'https://intranet.example.com/tool',
      'ftp://tools.example.com/x',
      'https://nowhere.example.com/tool',
    ])
      expect(await problemsOf(await create(webhookTool('t1', { url })))).toEqual(['body.url: url_not_allowed']);
    expect(await problemsOf(await create(webhookTool('t1', { timeout_ms: 10_001 })))).toEqual([
      'body.timeout_ms: less_than_equal',
    ]);
    expect(await problemsOf(await create(webhookTool('t1', { timeout_ms: 0 })))).toEqual([
      'body.timeout_ms: greater_than_equal',
    ]);
    expect(await problemsOf(await create(webhookTool('t1', { type: 'mcp' })))).toEqual(['body.type: enum']);
    // Several problems at once.
    expect(
      (await problemsOf(await create(webhookTool('t1', { description: ' ', url: 'http://10.0.0.1/' })))).sort(),
    ).toEqual(['body.description: string_blank', 'body.url: url_not_allowed']);
    expect((await (await account.call('GET', '/v1/tools')).json()) as Tool[]).toEqual([]);
  });

  test('parameters: only the safe subset of JSON Schema, each refusal naming the keyword', async () => {
    expect(await refusedParameters({ properties: {} })).toEqual(['body.parameters.type: schema_invalid']);
    expect(await refusedParameters({ type: 'array', items: { type: 'string' } })).toEqual([
      'body.parameters.type: schema_invalid',
    ]);
    expect(await refusedParameters({ type: 'object' })).toEqual(['body.parameters.properties: schema_invalid']);
    const withProperty = (date: unknown) => ({ type: 'object', properties: { date } });
    expect(await refusedParameters(withProperty({ type: 'date' }))).toEqual([
      'body.parameters.properties.date.type: schema_invalid',
    ]);
    expect(await refusedParameters(withProperty({ description: 'no type' }))).toEqual([
      'body.parameters.properties.date.type: schema_invalid',
    ]);
    expect(await refusedParameters(withProperty({ type: 'string', pattern: '(a+)+$' }))).toEqual([
      'body.parameters.properties.date.pattern: schema_keyword_unsupported',
    ]);
    expect(await refusedParameters(withProperty({ $ref: '#/definitions/x', type: 'string' }))).toEqual([
      'body.parameters.properties.date.$ref: schema_keyword_unsupported',
    ]);
    expect(await refusedParameters(withProperty({ type: 'string', format: 'date' }))).toEqual([
      'body.parameters.properties.date.format: schema_keyword_unsupported',
    ]);
    expect(await refusedParameters(withProperty({ type: 'string', minimum: 3 }))).toEqual([
      'body.parameters.properties.date.minimum: schema_keyword_unsupported',
    ]);
    expect(await refusedParameters(withProperty({ type: 'string', enum: ['a', 1] }))).toEqual([
      'body.parameters.properties.date.enum: schema_invalid',
    ]);
    expect(await refusedParameters(withProperty({ type: 'integer', maximum: '7' }))).toEqual([
      'body.parameters.properties.date.maximum: schema_invalid',
    ]);
    expect(await refusedParameters(withProperty({ type: 'string', maxLength: -1 }))).toEqual([
      'body.parameters.properties.date.maxLength: schema_invalid',
    ]);
    expect(await refusedParameters(withProperty({ type: 'object', properties: {}, additionalProperties: {} }))).toEqual(
      ['body.parameters.properties.date.additionalProperties: schema_invalid'],
    );
    expect(await refusedParameters({ type: 'object', properties: {}, required: ['city'] })).toEqual([
      'body.parameters.required: schema_invalid',
    ]);
    expect(await refusedParameters({ type: 'object', properties: { 'bad name': { type: 'string' } } })).toEqual([
      'body.parameters.properties.bad name: schema_invalid',
    ]);
    expect(await refusedParameters({ type: 'object', properties: {}, anyOf: [] })).toEqual([
      'body.parameters.anyOf: schema_keyword_unsupported',
    ]);
    // Depth: the top object, then four more levels pass; a fifth does not.
    const nested = (levels: number): Record<string, unknown> =>
      levels === 0 ? { type: 'string' } : { type: 'object', properties: { x: nested(levels - 1) } };
    expect((await create(webhookTool('deep_enough', { parameters: nested(4) }))).status).toBe(201);
    expect(await refusedParameters(nested(5))).toEqual([
      'body.parameters.properties.x.properties.x.properties.x.properties.x.properties.x: schema_too_deep',
    ]);
    // Size: 16 KB of schema at most.
    const wide = {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 40 }, (_, i) => [`p${i}`, { type: 'string', description: 'd'.repeat(400) }]),
      ),
    };
    expect(await refusedParameters(wide)).toEqual(['body.parameters: schema_too_large']);
    // The same rules on a PATCH.
    const tool = (await (await account.call('GET', '/v1/tools')).json()) as Tool[];
    const patched = await account.call(
      'PATCH',
      `/v1/tools/${tool[0]!.tool_id}`,
      json({ parameters: withProperty({ type: 'string', pattern: 'x' }) }),
    );
    expect(await problemsOf(patched)).toEqual(['body.parameters.properties.date.pattern: schema_keyword_unsupported']);
    await account.call('DELETE', `/v1/tools/${tool[0]!.tool_id}`);
  });

  test('the per-account limit: 422 too_many_tools, and room again after a delete', async () => {
    const made: Tool[] = [];
    for (let i = 0; i < MAX_TOOLS; i++) {
      const answer = await create({ name: `tool_${i}`, type: 'end_session' });
      expect(answer.status).toBe(201);
      made.push((await answer.json()) as Tool);
    }
    const over = await create({ name: 'one_more', type: 'end_session' });
    expect(await problemsOf(over.clone())).toEqual(['body: too_many_tools']);
    expect(((await over.json()) as Problems).detail[0]!.msg).toBe(
      `An account can have at most ${MAX_TOOLS} tools; delete one first`,
    );
    // Paged like the other lists: newest first, a Link while more follow.
    const first = await account.call('GET', '/v1/tools?limit=4');
    const page = (await first.json()) as Tool[];
    expect(page.map((t) => t.name)).toEqual(['tool_5', 'tool_4', 'tool_3', 'tool_2']);
    expect(first.headers.get('link')).toBe(`</v1/tools?limit=4&after=${page[3]!.tool_id}>; rel="next"`);
    const second = await account.call('GET', `/v1/tools?limit=4&after=${page[3]!.tool_id}`);
    expect(((await second.json()) as Tool[]).map((t) => t.name)).toEqual(['tool_1', 'tool_0']);
    expect(second.headers.get('link')).toBeNull();
    expect(await problemsOf(await account.call('GET', '/v1/tools?after=tool_nope'))).toEqual([
      'query.after: unknown_cursor',
    ]);
    await account.call('DELETE', `/v1/tools/${made[0]!.tool_id}`);
    expect((await create({ name: 'one_more', type: 'end_session' })).status).toBe(201);
    for (const tool of (await (await account.call('GET', '/v1/tools')).json()) as Tool[])
      await account.call('DELETE', `/v1/tools/${tool.tool_id}`);
  });

  test('a deleted tool drops out of the identities that had it', async () => {
    const db = service.services.database.db;
    const tool = (await (await create(webhookTool('crm_lookup'))).json()) as Tool;
    const [identity] = await db
      .insert(identities)
      .values({
        id: `idn_tools${engine}`,
        accountId: account.accountId,
        name: 'Ada',
        prompt: 'Help',
        pipelineId: 'builtin',
        status: 'ready',
        image: { key: 'x', contentType: 'image/png', width: 512, height: 512 } as unknown as StoredImage,
      })
      .returning();
    await db.insert(identityTools).values({ identityId: identity!.id, toolId: tool.tool_id, position: 0 });
    expect((await account.call('DELETE', `/v1/tools/${tool.tool_id}`)).status).toBe(204);
    expect(await db.select().from(identityTools).where(eq(identityTools.identityId, identity!.id))).toEqual([]);
  });

  test('the console twin: the same routes behind the console sign-in', async () => {
    const console = new ConsoleClient(service);
    expect((await console.call('GET', '/console/api/tools')).status).toBe(401);
    await console.signUp(uniqueEmail());
    const created = await console.call('POST', '/console/api/tools', { json: webhookTool('console_tool') });
    expect(created.status).toBe(201);
    const tool = (await created.json()) as Tool;
    expect(tool.secret).toMatch(/^whsec_/);
    const listed = (await (await console.call('GET', '/console/api/tools')).json()) as Tool[];
    expect(listed.map((t) => t.tool_id)).toEqual([tool.tool_id]);
    expect(listed[0]!.secret).toBeUndefined();
    // Without the CSRF token a change is refused.
    expect((await console.call('DELETE', `/console/api/tools/${tool.tool_id}`, { csrf: null })).status).toBe(403);
    const patched = await console.call('PATCH', `/console/api/tools/${tool.tool_id}`, { json: { timeout_ms: 2000 } });
    expect(((await patched.json()) as Tool).timeout_ms).toBe(2000);
    expect((await console.call('DELETE', `/console/api/tools/${tool.tool_id}`)).status).toBe(204);
    // The API key's account never saw it.
    expect((await account.call('GET', `/v1/tools/${tool.tool_id}`)).status).toBe(404);
  });
});
