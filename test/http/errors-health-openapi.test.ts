// The HTTP surface outside the identity rules: error shapes for unknown routes and methods,
// request ids, health, and the OpenAPI document generated from the validating schemas.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';

describe.each(ENGINES)('HTTP surface on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  beforeAll(async () => {
    service = await startTestService(engine, { livekit: 'local' });
    account = await service.account();
  });
  afterAll(() => service.stop());

  test('an unknown route answers 404 {detail}', async () => {
    const response = await account.call('GET', '/v1/nothing-here');
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ detail: expect.any(String) });
  });

  test('a known path with the wrong method answers 405 {detail} with Allow', async () => {
    const response = await account.call('PUT', '/v1/identities');
    expect(response.status).toBe(405);
    expect(await response.json()).toEqual({ detail: expect.any(String) });
    expect(response.headers.get('allow')).toContain('GET');
    expect(response.headers.get('allow')).toContain('POST');
    const one = await account.call('POST', '/v1/identities/idn_x/status');
    expect(one.status).toBe(405);
  });

  test('every response carries a request id; a client-sent one is echoed', async () => {
    for (const response of [
      await account.call('GET', '/v1/identities'),
      await service.call('GET', '/v1/identities'),
      await account.call('GET', '/v1/nope'),
      await account.call('GET', '/v1/identities?limit=0'),
      await service.call('GET', '/healthz'),
    ]) {
      expect(response.headers.get('x-request-id')).toMatch(/^req_[0-9A-Za-z]{22}$/);
    }
    const echoed = await account.call('GET', '/v1/identities', { headers: { 'x-request-id': 'trace-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-123');
  });

  test('/healthz answers while the process lives; /readyz checks the database, LiveKit and the warm-up', async () => {
    expect(await (await service.call('GET', '/healthz')).json()).toEqual({ status: 'ok' });
    // The face detector and the console's pages are made ready at start, before /readyz is.
    const ready = await eventually(
      async () => {
        const answer = await service.call('GET', '/readyz');
        return answer.status === 200 ? answer : undefined;
      },
      30_000,
      'ready',
    );
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', livekit: 'ok', warm: 'ok' } });
  });

  test('/openapi.json is OpenAPI 3.1 with the spec’s paths, fields and status codes', async () => {
    const doc = (await (await service.call('GET', '/openapi.json')).json()) as any;
    expect(doc.openapi).toMatch(/^3\.1\./);
    const paths = doc.paths as Record<string, Record<string, any>>;
    expect(Object.keys(paths['/v1/identities']!).sort()).toEqual(['get', 'post']);
    expect(Object.keys(paths['/v1/identities/{identity_id}']!).sort()).toEqual(['delete', 'get', 'patch']);
    expect(Object.keys(paths['/v1/identities/{identity_id}/status']!)).toEqual(['get']);
    // Every response's content is a map of media types (a 204 has none): what validators read.
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(
          (operation as { responses?: Record<string, { content?: Record<string, unknown> }> }).responses ?? {},
        )) {
          for (const mediaType of Object.keys(response.content ?? {}))
            expect([path, method, status, mediaType]).toEqual([path, method, status, expect.stringContaining('/')]);
        }
      }
    }
    expect(paths['/v1/identities/{identity_id}']!.delete.responses['204'].content).toBeUndefined();
    const create = paths['/v1/identities']!.post;
    const formSchema = create.requestBody.content['multipart/form-data'].schema;
    expect(formSchema.required.sort()).toEqual(['image', 'name', 'prompt']);
    expect(formSchema.properties.language.enum).toEqual(['auto', 'en', 'es', 'pl', 'uk']);
    expect(formSchema.properties.image.format).toBe('binary');
    expect(Object.keys(create.responses).sort()).toEqual(['200', '401', '402', '413', '415', '422', '429', '502']);
    const identity = create.responses['200'].content['application/json'].schema;
    const resolved = identity.$ref ? doc.components.schemas[identity.$ref.split('/').pop()] : identity;
    expect(Object.keys(resolved.properties).sort()).toEqual(
      [
        'audio',
        'created_at',
        'detail',
        'document_ids',
        'identity_id',
        'image',
        'language',
        'name',
        'outcome_schema',
        'pipeline_id',
        'prompt',
        'provider_avatar_id',
        'record_sessions',
        'status',
        'test',
        'tool_ids',
        'updated_at',
        'voice_id',
      ].sort(),
    );
    expect(Object.keys(paths['/v1/identities/{identity_id}']!.patch.responses).sort()).toEqual([
      '200',
      '202',
      '401',
      '404',
      '409',
      '413',
      '415',
      '422',
      '429',
    ]);
    expect(Object.keys(paths['/v1/identities/{identity_id}/status']!.get.responses).sort()).toEqual([
      '200',
      '401',
      '404',
    ]);
    const startOp = paths['/v1/sessions/start']!.post;
    expect(Object.keys(startOp.responses).sort()).toEqual([
      '200',
      '401',
      '402',
      '404',
      '409',
      '422',
      '429',
      '500',
      '503',
    ]);
    expect(Object.keys(startOp.requestBody.content)).toEqual(['application/json']);
    expect(startOp.requestBody.content['application/json'].schema.properties.form_factor.enum).toEqual([
      'phone',
      'desktop',
    ]);
    // The spec's fields, and `record` (ours: the client shows a recording mark, docs/api.md#recordings).
    expect(Object.keys(startOp.responses['200'].content['application/json'].schema.properties).sort()).toEqual([
      'created_at',
      'dispatch_id',
      'record',
      'room_name',
      'rtc_url',
      'token',
      'user',
      'visual_awareness',
    ]);
    const endOp = paths['/v1/sessions/{session_id}/end']!.post;
    expect(Object.keys(endOp.responses).sort()).toEqual(['200', '401', '404', '502']);
    expect(Object.keys(endOp.responses['200'].content['application/json'].schema.properties).sort()).toEqual([
      'identity_id',
      'metadata',
      'mode',
      'pipeline_id',
      'session_id',
      'status',
    ]);
    expect(doc.components.securitySchemes.bearer.scheme).toBe('bearer');
    expect(Object.keys(paths).some((p) => p.startsWith('/internal'))).toBe(false);
    expect(Object.keys(paths).some((p) => p.startsWith('/console') || p === '/metrics')).toBe(false);
  });

  test('every operation has an explicit, unique operationId (what generated clients name their methods)', async () => {
    const doc = (await (await service.call('GET', '/openapi.json')).json()) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const ids = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, op]) => [`${method} ${path}`, op.operationId]),
    );
    expect(Object.fromEntries(ids)).toEqual({
      'get /v1/identities': 'listIdentities',
      'post /v1/identities': 'createIdentity',
      'get /v1/identities/{identity_id}': 'getIdentity',
      'patch /v1/identities/{identity_id}': 'updateIdentity',
      'delete /v1/identities/{identity_id}': 'deleteIdentity',
      'get /v1/identities/{identity_id}/status': 'getIdentityStatus',
      'get /v1/pipelines': 'listPipelines',
      'get /v1/voices': 'listVoices',
      'post /v1/sessions/start': 'startSession',
      'post /v1/sessions/{session_id}/context': 'addSessionContext',
      'post /v1/sessions/{session_id}/end': 'endSession',
      'post /v1/sessions/{session_id}/interrupt': 'interruptSession',
      'post /v1/sessions/{session_id}/say': 'saySession',
      'get /v1/sessions/{session_id}': 'getSession',
      'get /v1/sessions/{session_id}/transcript': 'getSessionTranscript',
      'get /v1/sessions/{session_id}/recording': 'getSessionRecording',
      'delete /v1/sessions/{session_id}/recording': 'deleteSessionRecording',
      'get /v1/sessions/{session_id}/captions.vtt': 'getSessionCaptions',
      'put /v1/recording-storage': 'putRecordingStorage',
      'get /v1/recording-storage': 'getRecordingStorage',
      'delete /v1/recording-storage': 'deleteRecordingStorage',
      'get /v1/sessions': 'listSessions',
      'get /v1/credits': 'getCredits',
      'patch /v1/credits': 'updateCreditSettings',
      'get /v1/usage': 'getUsage',
      'post /v1/webhooks': 'createWebhook',
      'get /v1/webhooks': 'listWebhooks',
      'get /v1/webhooks/{webhook_id}': 'getWebhook',
      'patch /v1/webhooks/{webhook_id}': 'updateWebhook',
      'delete /v1/webhooks/{webhook_id}': 'deleteWebhook',
      'post /v1/webhooks/{webhook_id}/test': 'testWebhook',
      'get /v1/webhooks/{webhook_id}/deliveries': 'listWebhookDeliveries',
      'post /v1/tools': 'createTool',
      'get /v1/tools': 'listTools',
      'get /v1/tools/{tool_id}': 'getTool',
      'patch /v1/tools/{tool_id}': 'updateTool',
      'delete /v1/tools/{tool_id}': 'deleteTool',
      'post /v1/documents': 'uploadDocument',
      'get /v1/documents': 'listDocuments',
      'get /v1/documents/{document_id}': 'getDocument',
      'delete /v1/documents/{document_id}': 'deleteDocument',
      'post /v1/publishable-keys': 'createPublishableKey',
      'get /v1/publishable-keys': 'listPublishableKeys',
      'get /v1/publishable-keys/{publishable_key_id}': 'getPublishableKey',
      'patch /v1/publishable-keys/{publishable_key_id}': 'updatePublishableKey',
      'delete /v1/publishable-keys/{publishable_key_id}': 'revokePublishableKey',
      'post /v1/embed/sessions': 'startEmbedSession',
      'get /v1/visitors': 'listVisitors',
      'get /v1/visitors/{visitor_id}': 'getVisitor',
      'patch /v1/visitors/{visitor_id}': 'updateVisitor',
      'delete /v1/visitors/{visitor_id}': 'forgetVisitor',
      'post /v1/visitor-tokens': 'createVisitorToken',
    });
  });

  test('/docs serves a page whose scripts come from this server', async () => {
    const page = await (await service.call('GET', '/docs')).text();
    expect(page).toContain('/openapi.json');
    expect(page).not.toMatch(/https?:\/\//);
    const script = await service.call('GET', '/docs/swagger-ui-bundle.js');
    expect(script.status).toBe(200);
    expect((await script.text()).length).toBeGreaterThan(100_000);
  });
});

describe('readiness without a database', () => {
  test('/readyz answers 503 naming the failed check while /healthz still answers', async () => {
    const service = await startTestService('pglite');
    try {
      await service.services.database.close();
      const ready = await service.call('GET', '/readyz');
      expect(ready.status).toBe(503);
      const body = (await ready.json()) as { status: string; checks: Record<string, string> };
      expect(body.status).toBe('not_ready');
      expect(body.checks.database).not.toBe('ok');
      expect((await service.call('GET', '/healthz')).status).toBe(200);
    } finally {
      service.services.database.close = async () => {};
      await service.stop();
    }
  });
});
