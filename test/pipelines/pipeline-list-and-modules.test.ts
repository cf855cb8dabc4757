// GET /v1/pipelines (docs/api.md#pipelines): authenticated like every /v1 route, it lists what the
// registry holds, marks the default, and says what each pipeline renders (frame sizes as the
// landscape setting allows, or an avatar service). An unknown pipeline_id at create is 422
// naming the known ones, with nothing stored or charged.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadHostedAvatars } from '../../src/config.ts';
import { loadPipelines } from '../../src/pipelines/registry.ts';
import { identityForm } from '../support/forms.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';

interface PipelineBody {
  pipeline_id: string;
  description: string;
  default: boolean;
  renders: {
    kind: string;
    fps: number | null;
    portrait: { width: number; height: number } | null;
    landscape: { width: number; height: number } | null;
    provider: string | null;
  };
}

/** A second pipeline, rendered by an avatar service, loaded as an operator would: PIPELINE_MODULES. */
const ACME_MODULE = join(import.meta.dir, 'modules/acme.ts');

describe('GET /v1/pipelines', () => {
  let service: TestService;
  let account: TestAccount;

  beforeAll(async () => {
    service = await startTestService('pglite', {
      env: { CREDITS_ONBOARDING: '50', PIPELINE_MODULES: ACME_MODULE },
    });
    account = await service.account({ credits: 1000 });
  });
  afterAll(() => service.stop());

  test('needs an API key, in either header', async () => {
    expect((await service.call('GET', '/v1/pipelines')).status).toBe(401);
    const wrong = await service.call('GET', '/v1/pipelines', { headers: { authorization: 'Bearer lk_wrong' } });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { detail: string }).detail.length).toBeGreaterThan(0);
    expect((await service.call('GET', '/v1/pipelines', { headers: { 'x-api-key': account.apiKey } })).status).toBe(200);
  });

  test('lists every registered pipeline, the default marked, with what it renders', async () => {
    const response = await account.call('GET', '/v1/pipelines');
    expect(response.status).toBe(200);
    const pipelines = (await response.json()) as PipelineBody[];
    expect(pipelines.map((p) => p.pipeline_id)).toEqual(['builtin', 'acme-avatars']);
    for (const pipeline of pipelines) {
      expect(Object.keys(pipeline).sort()).toEqual(['default', 'description', 'pipeline_id', 'renders']);
      expect(pipeline.description.length).toBeGreaterThan(10);
    }
    const [builtin, acme] = pipelines;
    expect(builtin).toMatchObject({
      default: true,
      renders: {
        kind: 'frames',
        fps: 25,
        portrait: { width: 540, height: 960 },
        landscape: { width: 960, height: 540 },
        provider: null,
      },
    });
    expect(acme).toMatchObject({
      default: false,
      renders: { kind: 'avatar_service', fps: null, portrait: null, landscape: null, provider: 'acme' },
    });
  });

  test('an unknown pipeline_id at create is 422 naming the known ones; nothing is stored or charged', async () => {
    const before = {
      identities: await service.count('identities'),
      ledger: await service.count('credit_ledger'),
      assets: (await service.assetKeys()).length,
    };
    const response = await account.call('POST', '/v1/identities', {
      body: await identityForm({ pipeline_id: 'gpu-neural' }),
    });
    expect(response.status).toBe(422);
    const body = (await response.json()) as { detail: { loc: string[]; msg: string; type: string }[] };
    expect(body.detail).toHaveLength(1);
    expect(body.detail[0]!.loc).toEqual(['body', 'pipeline_id']);
    expect(body.detail[0]!.type).toBe('unknown_pipeline');
    expect(body.detail[0]!.msg).toContain('gpu-neural');
    // The same ids GET /v1/pipelines lists.
    const listed = ((await (await account.call('GET', '/v1/pipelines')).json()) as PipelineBody[]).map(
      (p) => p.pipeline_id,
    );
    for (const id of listed) expect(body.detail[0]!.msg).toContain(id);
    expect({
      identities: await service.count('identities'),
      ledger: await service.count('credit_ledger'),
      assets: (await service.assetKeys()).length,
    }).toEqual(before);
  });

  test('the OpenAPI document describes it', async () => {
    const doc = (await (await service.call('GET', '/openapi.json')).json()) as any;
    const operation = doc.paths['/v1/pipelines'].get;
    expect(operation.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    const item = operation.responses['200'].content['application/json'].schema.items;
    expect(Object.keys(item.properties).sort()).toEqual(['default', 'description', 'pipeline_id', 'renders']);
    expect(item.properties.renders.properties.kind.enum).toEqual(['frames', 'avatar_service']);
  });
});

describe('GET /v1/pipelines with landscape video disabled', () => {
  let service: TestService;
  let account: TestAccount;

  beforeAll(async () => {
    service = await startTestService('pglite', { env: { AVATAR_LANDSCAPE: 'false' } });
    account = await service.account();
  });
  afterAll(() => service.stop());

  test('the built-in pipeline lists portrait only', async () => {
    const pipelines = (await (await account.call('GET', '/v1/pipelines')).json()) as PipelineBody[];
    expect(pipelines).toHaveLength(1);
    expect(pipelines[0]!.renders).toEqual({
      kind: 'frames',
      fps: 25,
      portrait: { width: 540, height: 960 },
      landscape: null,
      provider: null,
    });
  });
});

describe('PIPELINE_MODULES and PIPELINE_DEFAULT', () => {
  const settings = (modules: string[], defaultId = 'builtin') => ({ modules, defaultId, hosted: {} });

  test('a module adds its pipelines after the built-in one; PIPELINE_DEFAULT picks the default', async () => {
    const registry = await loadPipelines(settings([ACME_MODULE], 'acme-avatars'));
    expect(registry.ids()).toEqual(['builtin', 'acme-avatars']);
    expect(registry.defaultId).toBe('acme-avatars');
    expect((await loadPipelines(settings([]))).ids()).toEqual(['builtin']);
  });

  test('a hosted avatar is a pipeline once its key is set, and only then', async () => {
    const key = { apiKey: 'test_key', apiUrl: 'http://provider.test' };
    const hosted = await loadPipelines({ ...settings([]), hosted: { lemonslice: key } });
    expect(hosted.ids()).toEqual(['builtin', 'lemonslice']);
    expect((await loadPipelines({ ...settings([]), hosted: { anam: key, bey: key } })).ids()).toEqual([
      'builtin',
      'anam',
      'bey',
    ]);
    expect((await loadPipelines(settings([]))).ids()).toEqual(['builtin']);
    // The keys come from the environment, each on its own.
    expect(loadHostedAvatars({ BEY_API_KEY: 'b', BEY_API_URL: 'http://bey.test' })).toEqual({
      lemonslice: undefined,
      anam: undefined,
      bey: { apiKey: 'b', apiUrl: 'http://bey.test' },
    });
    expect(loadHostedAvatars({ ANAM_API_KEY: 'a' }).anam).toEqual({ apiKey: 'a', apiUrl: 'https://api.anam.ai' });
  });

  test('a module that cannot be loaded, or exports no pipeline, stops the start naming it', async () => {
    const missing = join(import.meta.dir, 'modules/no-such-module.ts');
    await expect(loadPipelines(settings([missing]))).rejects.toThrow(
      `PIPELINE_MODULES: ${missing} could not be loaded`,
    );
    const wrong = join(import.meta.dir, 'modules/not-a-pipeline.ts');
    await expect(loadPipelines(settings([wrong]))).rejects.toThrow(
      `PIPELINE_MODULES: ${wrong} exports something that is not a pipeline`,
    );
    await expect(loadPipelines(settings([ACME_MODULE], 'gpu-neural'))).rejects.toThrow(
      'PIPELINE_DEFAULT: no pipeline "gpu-neural" (there are: builtin, acme-avatars)',
    );
  });

  test('the service does not start on a module that does not load', async () => {
    const missing = join(import.meta.dir, 'modules/no-such-module.ts');
    await expect(startTestService('pglite', { env: { PIPELINE_MODULES: missing } })).rejects.toThrow(
      'PIPELINE_MODULES',
    );
  });

  test('GET /v1/pipelines marks PIPELINE_DEFAULT as the default', async () => {
    const service = await startTestService('pglite', {
      env: { PIPELINE_MODULES: ACME_MODULE, PIPELINE_DEFAULT: 'acme-avatars' },
    });
    try {
      const pipelines = (await (await (await service.account()).call('GET', '/v1/pipelines')).json()) as PipelineBody[];
      expect(pipelines.filter((p) => p.default).map((p) => p.pipeline_id)).toEqual(['acme-avatars']);
    } finally {
      await service.stop();
    }
  });
});
