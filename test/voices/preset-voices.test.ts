// GET /v1/voices and choosing a preset with `voice_id` (create and PATCH), and what each kind of
// voice allows at session start (docs/api.md#languages): multilingual preset or
// cloned voice → every mode; English-only preset or the default voice → `en` only.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { PRESET_VOICES } from '../../src/voices/index.ts';
import * as fx from '../fixtures/index.ts';
import { file, form, type IdentityBody, identityForm } from '../support/forms.ts';
import { ENGINES, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { storedRow, waitUntilReady } from './support.ts';

interface VoiceBody {
  voice_id: string;
  name: string;
  description: string;
  gender: string;
  multilingual: boolean;
  languages: string[];
}
type Identity = IdentityBody & { voice_id: string | null };

/** A preset voice's fields in the API, as it answers them and as the OpenAPI document says. */
const VOICE_FIELDS = ['description', 'gender', 'languages', 'multilingual', 'name', 'voice_id'];

describe.each(ENGINES)('preset voices on %s', (engine) => {
  let service: TestService;
  let account: TestAccount;

  const create = async (fields: Parameters<typeof identityForm>[0]) => {
    const response = await account.call('POST', '/v1/identities', {
      body: await identityForm({ language: 'en', ...fields }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Identity;
  };
  const patch = (id: string, fields: Record<string, string | Blob>) =>
    account.call('PATCH', `/v1/identities/${id}`, { body: form(fields) });
  const start = (body: unknown) =>
    account.call('POST', '/v1/sessions/start', {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });

  beforeAll(async () => {
    service = await startTestService(engine, { livekit: 'local', env: { CREDITS_ONBOARDING: '0' } });
    account = await service.account({ credits: 100_000 });
  });
  afterAll(() => service.stop());

  test('GET /v1/voices needs a key and lists every preset with its flags', async () => {
    expect((await service.call('GET', '/v1/voices')).status).toBe(401);
    expect((await service.call('GET', '/v1/voices', { headers: { authorization: 'Bearer lk_wrong' } })).status).toBe(
      401,
    );
    const response = await account.call('GET', '/v1/voices');
    expect(response.status).toBe(200);
    const voices = (await response.json()) as VoiceBody[];
    expect(voices.map((v) => v.voice_id)).toEqual(PRESET_VOICES.map((v) => v.id));
    for (const voice of voices) {
      expect(Object.keys(voice).sort()).toEqual(VOICE_FIELDS);
      expect(voice.name.length).toBeGreaterThan(0);
      expect(voice.description.length).toBeGreaterThan(10);
      expect(voice.languages).toContain('en');
      expect(voice.languages.length === 4).toBe(voice.multilingual);
    }
    expect(voices[0]).toMatchObject({ voice_id: 'default', multilingual: false, languages: ['en'] });
    expect(voices.some((v) => v.voice_id !== 'default' && !v.multilingual)).toBe(true);
    expect(voices.filter((v) => v.multilingual).length).toBeGreaterThanOrEqual(2);
  });

  test('the OpenAPI document describes GET /v1/voices, voice_id on create and PATCH, and voice_id in the IdentityResponse', async () => {
    const doc = (await (await service.call('GET', '/openapi.json')).json()) as any;
    const list = doc.paths['/v1/voices'].get;
    expect(Object.keys(list.responses).sort()).toEqual(['200', '401']);
    expect(Object.keys(list.responses['200'].content['application/json'].schema.items.properties).sort()).toEqual(
      VOICE_FIELDS,
    );
    const create = doc.paths['/v1/identities'].post;
    expect(create.requestBody.content['multipart/form-data'].schema.properties.voice_id.type).toBe('string');
    expect(create.responses['502']).toBeDefined();
    expect(
      doc.paths['/v1/identities/{identity_id}'].patch.requestBody.content['multipart/form-data'].schema.properties
        .voice_id,
    ).toBeDefined();
    const identity = create.responses['200'].content['application/json'].schema;
    const resolved = identity.$ref ? doc.components.schemas[identity.$ref.split('/').pop()] : identity;
    expect(resolved.properties.voice_id).toBeDefined();
  });

  test('the API key in X-API-Key works too', async () => {
    expect((await service.call('GET', '/v1/voices', { headers: { 'x-api-key': account.apiKey } })).status).toBe(200);
  });

  test('a multilingual preset is stored and returned; every language mode starts, and the agent gets the voice', async () => {
    const identity = await create({ voice_id: 'aria' });
    expect(identity).toMatchObject({ voice_id: 'aria', audio: null, status: 'ready' });
    expect((await (await account.call('GET', `/v1/identities/${identity.identity_id}`)).json()) as Identity).toEqual(
      identity,
    );
    expect((await storedRow(service, identity.identity_id))!.voice).toMatchObject({
      presetId: 'aria',
      multilingual: true,
      elevenlabsVoiceId: '9BWtsMINqrJLrRacOk9x',
    });
    for (const language of ['es', 'auto', 'pl', 'uk', 'en']) {
      expect({ language, status: (await start({ identity_id: identity.identity_id, language })).status }).toEqual({
        language,
        status: 200,
      });
    }
    const started = (await (await start({ identity_id: identity.identity_id, language: 'es' })).json()) as {
      room_name: string;
      dispatch_id: string;
    };
    const dispatch = (await service.services.livekit.dispatches.listDispatch(started.room_name)).find(
      (d) => d.id === started.dispatch_id,
    )!;
    expect(JSON.parse(dispatch.metadata).voice).toMatchObject({
      preset_id: 'aria',
      multilingual: true,
      elevenlabs_voice_id: '9BWtsMINqrJLrRacOk9x',
    });
  });

  test('an English-only preset allows en only: auto and es answer 422', async () => {
    const identity = await create({ voice_id: 'roger' });
    expect(identity.voice_id).toBe('roger');
    for (const language of ['auto', 'es']) {
      const response = await start({ identity_id: identity.identity_id, language });
      expect(response.status).toBe(422);
      expect(((await response.json()) as any).detail[0]).toMatchObject({
        loc: ['body', 'language'],
        type: 'multilingual_voice_required',
      });
    }
    expect((await start({ identity_id: identity.identity_id, language: 'en' })).status).toBe(200);
  });

  test('neither audio nor voice_id: the default voice, English only', async () => {
    const identity = await create({});
    expect(identity.voice_id).toBe('default');
    expect((await storedRow(service, identity.identity_id))!.voice).toBeNull();
    expect((await start({ identity_id: identity.identity_id, language: 'es' })).status).toBe(422);
    expect((await start({ identity_id: identity.identity_id, language: 'auto' })).status).toBe(422);
    expect((await create({ voice_id: 'default' })).voice_id).toBe('default');
  });

  test('uploaded audio becomes a cloned multilingual voice (offline: a measured profile) that starts in es', async () => {
    const identity = await create({ audio: file(fx.wav({ seconds: 10 }), 'v.wav') });
    expect(identity.voice_id).toBeNull();
    expect(identity.audio).not.toBeNull();
    const voice = (await storedRow(service, identity.identity_id))!.voice!;
    expect(voice).toMatchObject({ presetId: null, multilingual: true, elevenlabsVoiceId: null });
    expect(voice.profile.pitchHz).toBeGreaterThan(130); // the fixture's voice is ~150 Hz
    expect(voice.profile.pitchHz).toBeLessThan(180);
    expect((await start({ identity_id: identity.identity_id, language: 'es' })).status).toBe(200);
  });

  test('PATCH voice_id alone: 200, the preset replaces the cloned voice and the sample is dropped', async () => {
    const identity = await create({ audio: file(fx.wav({ seconds: 10 }), 'v.wav') });
    const response = await patch(identity.identity_id, { voice_id: 'roger' });
    expect(response.status).toBe(200);
    const updated = (await response.json()) as Identity;
    expect(updated).toMatchObject({
      voice_id: 'roger',
      audio: null,
      status: 'ready',
      image: identity.image,
      prompt: identity.prompt,
    });
    expect((await fetch(identity.audio!)).status).toBe(404);
    expect((await service.assetKeys()).filter((k) => k.includes(identity.identity_id) && k.includes('voice.'))).toEqual(
      [],
    );
    expect((await start({ identity_id: identity.identity_id, language: 'es' })).status).toBe(422);

    expect(
      (await (await patch(identity.identity_id, { voice_id: 'adam', name: 'Adam now' })).json()) as Identity,
    ).toMatchObject({
      voice_id: 'adam',
      name: 'Adam now',
    });
    expect((await start({ identity_id: identity.identity_id, language: 'es' })).status).toBe(200);
    expect(((await (await patch(identity.identity_id, { voice_id: 'default' })).json()) as Identity).voice_id).toBe(
      'default',
    );
    expect((await storedRow(service, identity.identity_id))!.voice).toBeNull();
  });

  test('PATCH audio replaces a preset with a clone of the new sample (through the retrain)', async () => {
    const identity = await create({ voice_id: 'roger' });
    const response = await patch(identity.identity_id, {
      prompt: 'New prompt',
      audio: file(fx.wav({ seconds: 8 }), 'n.wav'),
    });
    expect(response.status).toBe(202);
    await waitUntilReady(account, identity.identity_id);
    const after = (await (await account.call('GET', `/v1/identities/${identity.identity_id}`)).json()) as Identity;
    expect(after).toMatchObject({ voice_id: null, detail: null });
    expect(new URL(after.audio!).pathname).toMatch(/\.wav$/);
    expect((await storedRow(service, identity.identity_id))!.voice).toMatchObject({
      presetId: null,
      multilingual: true,
    });
    expect((await start({ identity_id: identity.identity_id, language: 'uk' })).status).toBe(200);
  });

  test('PATCH voice_id with an image upload: the voice applies at once, the image retrains', async () => {
    const identity = await create({ audio: file(fx.wav({ seconds: 10 }), 'v.wav') });
    const response = await patch(identity.identity_id, {
      prompt: 'p',
      image: file(fx.portraitPng(), 'p.png'),
      voice_id: 'aria',
    });
    expect(response.status).toBe(202);
    expect((await response.json()) as Identity).toMatchObject({ status: 'training', voice_id: 'aria', audio: null });
    await waitUntilReady(account, identity.identity_id);
    const after = (await (await account.call('GET', `/v1/identities/${identity.identity_id}`)).json()) as Identity;
    expect(after).toMatchObject({ voice_id: 'aria', audio: null, detail: null });
    expect(after.image).not.toBe(identity.image);
  });
});
