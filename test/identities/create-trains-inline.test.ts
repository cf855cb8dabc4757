// POST /v1/identities (docs/api.md#identities-create, #identity-states): ready within the call, media judged from bytes,
// stored and served as URLs, charged once, and nothing left behind when anything fails.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import sharp from 'sharp';
import { identities } from '../../src/identities/schema.ts';
import { builtinTraining } from '../../src/pipelines/builtin/index.ts';
import { PipelineRegistry } from '../../src/pipelines/registry.ts';
import type { Pipeline } from '../../src/pipelines/types.ts';
import * as fx from '../fixtures/index.ts';
import { localStoreWith } from '../support/fakes/asset-store.ts';
import { file, type IdentityBody, identityForm } from '../support/forms.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe.each(ENGINES)('creating identities on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;
  /** Status of the row as the pipeline saw it while training. */
  const seenDuringTraining: string[] = [];
  const watchingPipeline: Pipeline = {
    ...builtinTraining,
    async train(input) {
      const [row] = await service.services.database.db
        .select()
        .from(identities)
        .where(eq(identities.id, input.identityId));
      seenDuringTraining.push(row!.status);
      return builtinTraining.train(input);
    },
  };

  beforeAll(async () => {
    service = await startTestService(engine, {
      env: { CREDITS_ONBOARDING: '50' },
      overrides: { pipelines: new PipelineRegistry([watchingPipeline], 'builtin') },
    });
    account = await service.account({ credits: 1000 });
  });
  afterAll(() => service.stop());

  const create = async (fields: Parameters<typeof identityForm>[0] = {}, who = account) =>
    who.call('POST', '/v1/identities', { body: await identityForm(fields) });

  test('a valid form answers 200 with a ready IdentityResponse carrying every field', async () => {
    const response = await create({ name: 'Ada', prompt: 'You are Ada.', language: 'en' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as IdentityBody;
    expect(body).toMatchObject({
      name: 'Ada',
      prompt: 'You are Ada.',
      language: 'en',
      status: 'ready',
      detail: null,
      audio: null,
      pipeline_id: 'builtin',
    });
    expect(body.identity_id).toMatch(/^idn_[0-9A-Za-z]{22}$/);
    expect(body.created_at).toMatch(ISO);
    expect(body.updated_at).toMatch(ISO);
    expect(body.image.startsWith(`${service.config.assetsUrl}/`)).toBe(true);
  });

  test('training runs inline: the row is training while the pipeline runs, ready after', async () => {
    seenDuringTraining.length = 0;
    const body = (await (await create()).json()) as IdentityBody;
    expect(seenDuringTraining).toEqual(['training']);
    expect(body.status).toBe('ready');
  });

  test('language defaults to auto', async () => {
    const body = (await (await create({ language: undefined })).json()) as IdentityBody;
    expect(body.language).toBe('auto');
  });

  test.each(['auto', 'en', 'es', 'pl', 'uk'])(
    'language %s is stored and returned by create, get and list',
    async (language) => {
      const body = (await (await create({ language })).json()) as IdentityBody;
      expect(body.language).toBe(language);
      const got = (await (await account.call('GET', `/v1/identities/${body.identity_id}`)).json()) as IdentityBody;
      expect(got.language).toBe(language);
      const list = (await (await account.call('GET', '/v1/identities')).json()) as IdentityBody[];
      expect(list.find((i) => i.identity_id === body.identity_id)?.language).toBe(language);
    },
  );

  test('the image URL serves the stored image, EXIF orientation applied and metadata stripped', async () => {
    const jpeg = await fx.portraitJpeg({ width: 800, height: 600, exifOrientation: 6, withGpsExif: true });
    const raw = await sharp(jpeg).metadata();
    expect(raw.exif).toBeDefined();
    const body = (await (await create({ image: file(jpeg, 'a.jpg', 'image/jpeg') })).json()) as IdentityBody;
    const served = await fetch(body.image);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/jpeg');
    const meta = await sharp(new Uint8Array(await served.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([800, 600]);
    expect(meta.exif).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
  });

  test.each([
    ['PNG', async () => file(fx.portraitPng(), 'a.png', 'image/png')],
    ['a greyscale PNG of another person', async () => file(fx.cameramanPng(), 'cameraman.png', 'image/png')],
    ['WebP', async () => file(await fx.portraitWebp({ width: 600, height: 800 }), 'a.webp', 'image/webp')],
    [
      'a JPEG labelled image/png',
      async () => file(await fx.portraitJpeg({ width: 600, height: 800 }), 'a.png', 'image/png'),
    ],
    ['a PNG labelled application/octet-stream', async () => file(fx.portraitPng(), 'blob', 'application/octet-stream')],
  ])('%s is accepted: the type comes from the bytes', async (_, image) => {
    const response = await create({ image: await image() });
    expect(response.status).toBe(200);
  });

  test.each([
    ['WAV', () => fx.wav({ seconds: 12 }), 'audio/wav', '.wav'],
    ['MP3', () => fx.mp3({ seconds: 12 }), 'audio/mpeg', '.mp3'],
    ['M4A', () => fx.m4a({ seconds: 12 }), 'audio/mp4', '.m4a'],
  ])('%s audio is stored and served at the audio URL', async (_, make, contentType, ext) => {
    const bytes = await make();
    const body = (await (
      await create({ audio: file(bytes, `voice${ext}`, 'application/octet-stream') })
    ).json()) as IdentityBody;
    expect(body.audio).not.toBeNull();
    expect(new URL(body.audio!).pathname.endsWith(ext)).toBe(true);
    const served = await fetch(body.audio!);
    expect(served.headers.get('content-type')).toBe(contentType);
    expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
  });

  test('a 120 s WAV (the maximum) is accepted', async () => {
    const response = await create({ audio: file(fx.wav({ seconds: 119.5, sampleRate: 8000 }), 'v.wav') });
    expect(response.status).toBe(200);
  });

  test('asset addresses are unguessable and unknown ones answer 404', async () => {
    const body = (await (await create()).json()) as IdentityBody;
    const path = new URL(body.image).pathname;
    expect(path).toMatch(new RegExp(`^/assets/identities/${body.identity_id}/[0-9A-Za-z]{24}/image\\.jpg$`));
    expect((await fetch(`${service.url}/assets/identities/${body.identity_id}/guess/image.jpg`)).status).toBe(404);
    expect((await fetch(`${service.url}/assets/identities/../../etc/passwd`)).status).toBe(404);
  });

  test('onboarding is charged once, from the account balance', async () => {
    const payer = await service.account({ credits: 120 });
    const body = (await (await create({}, payer)).json()) as IdentityBody;
    expect(await service.services.ledger.balance(payer.accountId)).toBe(70);
    const entries = await service.services.ledger.entries(payer.accountId);
    expect(entries.filter((e) => e.kind === 'onboarding')).toEqual([
      expect.objectContaining({ amount: -50, reference: `identity:${body.identity_id}` }),
    ]);
  });

  test('an account that cannot pay the onboarding gets 402 and nothing is stored', async () => {
    const poor = await service.account({ credits: 49 });
    const filesBefore = await service.assetKeys();
    const rowsBefore = await service.count('identities');
    const response = await create({}, poor);
    expect(response.status).toBe(402);
    expect(typeof ((await response.json()) as { detail: unknown }).detail).toBe('string');
    expect(await service.count('identities')).toBe(rowsBefore);
    expect(await service.assetKeys()).toEqual(filesBefore);
    expect(await service.services.ledger.balance(poor.accountId)).toBe(49);
  });

  test('concurrent creates never spend more than the balance', async () => {
    const payer = await service.account({ credits: 120 });
    const statuses = await Promise.all(Array.from({ length: 4 }, async () => (await create({}, payer)).status));
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 402)).toHaveLength(2);
    expect(await service.services.ledger.balance(payer.accountId)).toBe(20);
    const list = (await (await payer.call('GET', '/v1/identities')).json()) as unknown[];
    expect(list).toHaveLength(2);
    const files = await service.assetKeys();
    for (const id of (list as IdentityBody[]).map((i) => i.identity_id))
      expect(files.some((f) => f.includes(id))).toBe(true);
  });
});

describe.each(ENGINES)('a failure after validation on %s', (engine) => {
  let service: TestService;
  let failWrites = false;
  beforeAll(async () => {
    // Fails on the second write: the first file is already stored when the failure comes.
    let writes = 0;
    const flaky = await localStoreWith((inner) => ({
      put: async (key, bytes, type) => {
        if (failWrites && ++writes === 2) throw new Error('disk full at /var/secret/internal/path');
        return inner.put(key, bytes, type);
      },
    }));
    service = await startTestService(engine, { overrides: { store: flaky } });
  });
  afterAll(() => service.stop());

  test('leaves no row, no file and no charge, and answers 500 without internals', async () => {
    const account = await service.account({ credits: 500 });
    failWrites = true;
    const response = await account.call('POST', '/v1/identities', {
      body: await identityForm({ audio: file(fx.wav({ seconds: 5 }), 'v.wav') }),
    });
    failWrites = false;
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ detail: expect.any(String) });
    expect(text).not.toContain('secret');
    expect(text).not.toContain('at ');
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(await service.count('identities')).toBe(0);
    expect(await service.assetKeys()).toEqual([]);
    expect(await service.services.ledger.balance(account.accountId)).toBe(500);
    expect((await service.services.ledger.entries(account.accountId)).map((e) => e.kind)).toEqual(['grant']);
  });
});
