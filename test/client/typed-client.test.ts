// The API as a product (issue 17): /openapi.json passes a kept validator (openapi-spec-validator,
// PyPI), the typed client in examples/api-client is generated from it and fails this test
// while stale, and the README's curl walkthrough runs through that client: an account from
// the CLI, an identity, its status, a session, its transcript, its end, the credits. The fuzzing
// of the running API against the document (schemathesis, with a real key: no server error, no
// answer the document does not describe) is in test/sessions/fair-share.test.ts: one run, on
// Postgres with a real agent worker, every operation this file's run covered included.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { clientTypesFor, currentDocument, SCHEMA_FILE } from '../../examples/api-client/generate.ts';
import { likenessClient } from '../../examples/api-client/index.ts';
import { astronautPhoto } from '../avatar/support.ts';
import { startTestService, type TestService } from '../support/service.ts';

const CLI = join(import.meta.dir, '../../src/cli/index.ts');
const PYTHON = process.env.LIKENESS_TEST_PYTHON ?? 'python3';

let service: TestService;
beforeAll(async () => {
  service = await startTestService('pglite', { livekit: 'local' });
}, 60_000);
afterAll(() => service?.stop());

describe('the OpenAPI document', () => {
  test('is valid OpenAPI 3.1 to openapi-spec-validator', async () => {
    const file = join(service.dataDir, 'openapi.json');
    await Bun.write(file, await (await fetch(`${service.url}/openapi.json`)).text());
    const validator = Bun.spawn([PYTHON, '-m', 'openapi_spec_validator', file], { stdout: 'pipe', stderr: 'pipe' });
    const [out, err, code] = await Promise.all([
      new Response(validator.stdout).text(),
      new Response(validator.stderr).text(),
      validator.exited,
    ]);
    expect({ code, out: out.trim(), err: err.trim() }).toMatchObject({ code: 0, out: expect.stringContaining('OK') });
  });

  test('examples/api-client/schema.d.ts is what openapi-typescript makes of it now (npm run client:generate)', async () => {
    expect(await Bun.file(SCHEMA_FILE).text()).toBe(await clientTypesFor(await currentDocument()));
  }, 60_000);
});

test("the README's walkthrough, through the typed client", async () => {
  // An account and its first key, from the operator CLI beside the running service.
  const cli = Bun.spawn(['bun', CLI, 'accounts', 'create', '--email', 'client@example.com', '--credits', '1000'], {
    env: { ...process.env, DATA_DIR: service.dataDir },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, , code] = await Promise.all([
    new Response(cli.stdout).text(),
    new Response(cli.stderr).text(),
    cli.exited,
  ]);
  expect(code).toBe(0);
  const { api_key } = JSON.parse(out) as { api_key: string };
  const likeness = likenessClient({ baseUrl: service.url, apiKey: api_key });

  // The generated type says what the form holds; it goes as multipart, as curl -F sends it.
  const fields = {
    name: 'Ada',
    prompt: 'You are Ada, a friendly guide.',
    language: 'en' as const,
    image: await astronautPhoto(),
  };
  const created = await likeness.POST('/v1/identities', { body: fields, bodySerializer: formOf });
  expect(created.response.status).toBe(200);
  const identity = created.data!;
  expect(identity.status).toBe('ready');

  const status = await likeness.GET('/v1/identities/{identity_id}/status', {
    params: { path: { identity_id: identity.identity_id } },
  });
  expect(status.data).toMatchObject({ identity_id: identity.identity_id, status: 'ready' });
  const renamed = await likeness.PATCH('/v1/identities/{identity_id}', {
    params: { path: { identity_id: identity.identity_id } },
    body: { name: 'Ada Lovelace' },
    bodySerializer: formOf,
  });
  expect(renamed.response.status).toBe(200);
  expect((await likeness.GET('/v1/voices')).data!.length).toBeGreaterThan(0);

  // A tool and a document, given to the session (the documents' upload is multipart too).
  const tool = await likeness.POST('/v1/tools', {
    body: {
      name: 'get_appointment',
      type: 'client',
      description: "Show the visitor's next appointment",
      parameters: { type: 'object', properties: { date: { type: 'string' } }, required: ['date'] },
    },
  });
  expect(tool.response.status).toBe(201);
  const uploaded = await likeness.POST('/v1/documents', {
    body: {
      file: new File(['Parking is free at Calle Mayor 12.'], 'parking.txt', { type: 'text/plain' }),
      name: 'Parking',
    },
    bodySerializer: formOf,
  });
  expect(uploaded.response.status).toBe(202);
  expect(uploaded.data!.status).toBe('processing');
  const documents = await likeness.GET('/v1/documents');
  expect(documents.data!.map((d) => d.name)).toEqual(['Parking']);

  const started = await likeness.POST('/v1/sessions/start', {
    body: {
      identity_id: identity.identity_id,
      form_factor: 'phone',
      tool_ids: [tool.data!.tool_id],
      document_ids: [uploaded.data!.document_id],
    },
  });
  expect(started.response.status).toBe(200);
  const session = started.data!;
  expect(session.room_name).toMatch(/^ses_/);
  expect(session.token).toBeString();
  const read = await likeness.GET('/v1/sessions/{session_id}', { params: { path: { session_id: session.room_name } } });
  expect(read.data!.status).toBe('running');
  expect(read.data!.tool_ids).toEqual([tool.data!.tool_id]);
  const transcript = await likeness.GET('/v1/sessions/{session_id}/transcript', {
    params: { path: { session_id: session.room_name } },
  });
  expect(transcript.response.status).toBe(200);
  const ended = await likeness.POST('/v1/sessions/{session_id}/end', {
    params: { path: { session_id: session.room_name } },
  });
  expect(ended.data!.status).toBe('ended');

  // Errors come back typed too: the spec's {detail}.
  const missing = await likeness.GET('/v1/identities/{identity_id}', {
    params: { path: { identity_id: 'idn_nosuchidentity' } },
  });
  expect(missing.response.status).toBe(404);
  expect(missing.error!.detail).toBe('Identity not found');

  const credits = await likeness.GET('/v1/credits', { params: { query: { limit: 10 } } });
  expect(credits.data!.balance).toBe(1000 - service.config.credits.onboardingCost);
  const usage = await likeness.GET('/v1/usage', { params: { query: { granularity: 'day' } } });
  expect(usage.data!.totals.sessions).toBe(1);

  const deleted = await likeness.DELETE('/v1/identities/{identity_id}', {
    params: { path: { identity_id: identity.identity_id } },
  });
  expect(deleted.response.status).toBe(204);
}, 60_000);

function formOf(fields: object): FormData {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.set(key, value instanceof Blob ? value : String(value));
  return form;
}
