// Reading, listing, updating, retraining and deleting identities (docs/api.md#identities).
import { describe, expect, test } from 'bun:test';
import * as fx from '../fixtures/index.ts';
import { file, form, type IdentityBody, identityForm } from '../support/forms.ts';
import { ENGINES, waitForStatus } from '../support/service.ts';
import { suiteService, suiteServiceWithAccount } from '../support/suite-service.ts';
import { eventually } from '../support/visitor.ts';

describe.each(ENGINES)('managing identities on %s', (engine) => {
  const suite = suiteServiceWithAccount(engine, { credits: 100_000 });

  const create = async (fields: Parameters<typeof identityForm>[0] = {}, who = suite.account) => {
    const response = await who.call('POST', '/v1/identities', { body: await identityForm(fields) });
    expect(response.status).toBe(200);
    return (await response.json()) as IdentityBody;
  };
  const patch = (id: string, fields: Record<string, string | Blob | undefined>) =>
    suite.account.call('PATCH', `/v1/identities/${id}`, { body: form(fields) });

  test('GET one returns the IdentityResponse', async () => {
    const created = await create({ name: 'Grace' });
    const response = await suite.account.call('GET', `/v1/identities/${created.identity_id}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(created);
  });

  test('GET one of an unknown identity answers 404', async () => {
    const response = await suite.account.call('GET', '/v1/identities/idn_doesnotexist');
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ detail: expect.any(String) });
  });

  test('GET status returns identity_id, status, updated_at and detail', async () => {
    const created = await create();
    const response = await suite.account.call('GET', `/v1/identities/${created.identity_id}/status`);
    expect(await response.json()).toEqual({
      identity_id: created.identity_id,
      status: 'ready',
      updated_at: created.updated_at,
      detail: null,
    });
  });

  test('the list is a JSON array of the caller’s identities, newest first, with the list-item fields', async () => {
    const owner = await suite.service.account({ credits: 10_000 });
    const a = await create({ name: 'first' }, owner);
    const b = await create({ name: 'second' }, owner);
    const c = await create({ name: 'third' }, owner);
    const list = (await (await owner.call('GET', '/v1/identities')).json()) as Record<string, unknown>[];
    expect(list.map((i) => i.identity_id)).toEqual([c.identity_id, b.identity_id, a.identity_id]);
    for (const item of list) {
      expect(item).toEqual(
        expect.objectContaining({
          identity_id: expect.any(String),
          name: expect.any(String),
          status: 'ready',
          updated_at: expect.any(String),
          language: 'auto',
        }),
      );
    }
  });

  test('the list pages with limit and after, and says where the next page starts', async () => {
    const owner = await suite.service.account({ credits: 10_000 });
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await create({ name: `n${i}` }, owner));
    const newestFirst = made.reverse().map((i) => i.identity_id);
    const first = await owner.call('GET', '/v1/identities?limit=2');
    const page1 = ((await first.json()) as IdentityBody[]).map((i) => i.identity_id);
    expect(page1).toEqual(newestFirst.slice(0, 2));
    expect(first.headers.get('link')).toBe(`</v1/identities?limit=2&after=${page1[1]}>; rel="next"`);
    const page2 = (
      (await (await owner.call('GET', `/v1/identities?limit=2&after=${page1[1]}`)).json()) as IdentityBody[]
    ).map((i) => i.identity_id);
    expect(page2).toEqual(newestFirst.slice(2, 4));
    const page3 = await owner.call('GET', `/v1/identities?limit=2&after=${page2[1]}`);
    expect(((await page3.json()) as IdentityBody[]).map((i) => i.identity_id)).toEqual(newestFirst.slice(4));
    expect(page3.headers.get('link')).toBeNull();
    expect((await owner.call('GET', '/v1/identities?limit=0')).status).toBe(422);
    expect((await owner.call('GET', '/v1/identities?limit=abc')).status).toBe(422);
    expect((await owner.call('GET', '/v1/identities?after=idn_unknown')).status).toBe(422);
  });

  test('PATCH with name only renames and answers 200 with the identity', async () => {
    const created = await create({ name: 'Old', language: 'pl' });
    const response = await patch(created.identity_id, { name: 'New' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as IdentityBody;
    // Everything but the name (and updated_at) is as it was: omitted fields are never defaulted.
    expect({ ...body, updated_at: created.updated_at }).toEqual({ ...created, name: 'New' });
    expect(Date.parse(body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
  });

  test('PATCH with prompt or language and no uploads answers 200 and changes them', async () => {
    const created = await create();
    const response = await patch(created.identity_id, { prompt: 'You are now a pirate.', language: 'es' });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ prompt: 'You are now a pirate.', language: 'es', status: 'ready' });
  });

  test('PATCH validates like create: bad language, blank name, unknown fields ignored', async () => {
    const created = await create();
    expect((await patch(created.identity_id, { language: 'de' })).status).toBe(422);
    expect((await patch(created.identity_id, { name: '  ' })).status).toBe(422);
    expect((await patch(created.identity_id, {})).status).toBe(422);
    expect((await suite.account.call('GET', `/v1/identities/${created.identity_id}`)).status).toBe(200);
  });

  test('PATCH pipeline_id answers 422: the pipeline is immutable', async () => {
    const created = await create();
    const response = await patch(created.identity_id, { pipeline_id: 'builtin' });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      detail: [{ loc: ['body', 'pipeline_id'], msg: expect.any(String), type: 'immutable_field' }],
    });
  });

  test('PATCH with uploads but no prompt answers 422 and changes nothing', async () => {
    const created = await create();
    const response = await patch(created.identity_id, { image: file(fx.portraitPng(), 'a.png') });
    expect(response.status).toBe(422);
    expect((await response.json()) as unknown).toEqual({
      detail: [expect.objectContaining({ loc: ['body', 'prompt'] })],
    });
    expect(await (await suite.account.call('GET', `/v1/identities/${created.identity_id}`)).json()).toEqual(created);
  });

  test('PATCH with bad uploads answers 415/422 and changes nothing', async () => {
    const created = await create();
    const filesBefore = await suite.service.assetKeys();
    expect((await patch(created.identity_id, { prompt: 'p', image: file(fx.pdf(), 'a.jpg') })).status).toBe(415);
    expect((await patch(created.identity_id, { prompt: 'p', image: file(await fx.tinyPng(), 'a.png') })).status).toBe(
      422,
    );
    expect(
      (
        await patch(created.identity_id, {
          prompt: 'p',
          audio: file(fx.wav({ seconds: 121, sampleRate: 8000, claimSeconds: 10 }), 'a.wav'),
        })
      ).status,
    ).toBe(422);
    expect(await suite.service.assetKeys()).toEqual(filesBefore);
    expect(await (await suite.account.call('GET', `/v1/identities/${created.identity_id}`)).json()).toEqual(created);
  });

  test('PATCH with an image and prompt answers 202, reads training, then ready with the new image', async () => {
    const created = await create();
    const response = await patch(created.identity_id, {
      prompt: 'Retrained prompt',
      image: file(fx.portraitPng(), 'b.png'),
    });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as IdentityBody;
    expect(accepted).toMatchObject({ status: 'training', prompt: 'Retrained prompt' });
    await waitForStatus(suite.account, created.identity_id, 'ready');
    const after = (await (
      await suite.account.call('GET', `/v1/identities/${created.identity_id}`)
    ).json()) as IdentityBody;
    expect(after.image).not.toBe(created.image);
    expect(after.detail).toBeNull();
    expect((await fetch(after.image)).status).toBe(200);
    // The old face and the raw upload serve until the switch to ready and are deleted right after it.
    await eventually(async () => (await fetch(created.image)).status === 404, 5_000, 'the old face to be deleted');
    await eventually(
      async () =>
        (await suite.service.assetKeys()).every((k) => !(k.includes(created.identity_id) && k.includes('upload'))),
      5_000,
      'the raw upload to be deleted',
    );
  });

  test('PATCH with audio and prompt retrains the voice and keeps the image', async () => {
    const created = await create({ audio: file(fx.wav({ seconds: 10 }), 'a.wav') });
    const response = await patch(created.identity_id, {
      prompt: 'p2',
      audio: file(await fx.mp3({ seconds: 15 }), 'b.mp3'),
    });
    expect(response.status).toBe(202);
    await waitForStatus(suite.account, created.identity_id, 'ready');
    const after = (await (
      await suite.account.call('GET', `/v1/identities/${created.identity_id}`)
    ).json()) as IdentityBody;
    expect(after.image).toBe(created.image);
    expect(new URL(after.audio!).pathname).toMatch(/\.mp3$/);
    await eventually(
      async () => (await fetch(created.audio!)).status === 404,
      5_000,
      'the old voice sample to be deleted',
    );
  });

  test('a second retrain while one runs answers 409; they never interleave', async () => {
    const created = await create();
    const upload = () => patch(created.identity_id, { prompt: 'again', image: file(fx.portraitPng(), 'c.png') });
    const [first, second] = await Promise.all([upload(), upload()]);
    expect([first.status, second.status].sort()).toEqual([202, 409]);
    await waitForStatus(suite.account, created.identity_id, 'ready');
    // The previous media serve until the switch to ready and are deleted right after it.
    await eventually(
      async () => {
        const files = (await suite.service.assetKeys()).filter((k) => k.includes(created.identity_id));
        return files.filter((k) => k.endsWith('render.png')).length === 1;
      },
      5_000,
      'the previous render to be deleted',
    );
  });

  test('a retrain is not charged again', async () => {
    const payer = await suite.service.account({ credits: 50 });
    const created = await create({}, payer);
    expect(await suite.service.services.ledger.balance(payer.accountId)).toBe(0);
    const response = await payer.call('PATCH', `/v1/identities/${created.identity_id}`, {
      body: form({ prompt: 'p', image: file(fx.portraitPng(), 'a.png') }),
    });
    expect(response.status).toBe(202);
    await waitForStatus(payer, created.identity_id, 'ready');
  });

  test('DELETE answers 204, removes the identity and its files', async () => {
    const created = await create({ audio: file(fx.wav({ seconds: 5 }), 'a.wav') });
    const response = await suite.account.call('DELETE', `/v1/identities/${created.identity_id}`);
    expect(response.status).toBe(204);
    expect((await suite.account.call('GET', `/v1/identities/${created.identity_id}`)).status).toBe(404);
    expect((await suite.service.assetKeys()).filter((k) => k.includes(created.identity_id))).toEqual([]);
    expect((await fetch(created.image)).status).toBe(404);
    expect((await fetch(created.audio!)).status).toBe(404);
    expect((await suite.account.call('DELETE', `/v1/identities/${created.identity_id}`)).status).toBe(404);
  });
});

describe.each(ENGINES)('two accounts on %s', (engine) => {
  const suite = suiteService(engine);

  test("every identity route answers 404 for another account's identity, exactly as for a missing one", async () => {
    const alice = await suite.service.account();
    const bob = await suite.service.account();
    const created = (await (
      await alice.call('POST', '/v1/identities', { body: await identityForm() })
    ).json()) as IdentityBody;
    const id = created.identity_id;
    const attempts: [string, string, () => Promise<FormData | undefined>][] = [
      ['GET', `/v1/identities/${id}`, async () => undefined],
      ['GET', `/v1/identities/${id}/status`, async () => undefined],
      ['PATCH', `/v1/identities/${id}`, async () => form({ name: 'stolen' })],
      ['PATCH', `/v1/identities/${id}`, async () => form({ prompt: 'p', image: file(fx.portraitPng(), 'a.png') })],
      ['DELETE', `/v1/identities/${id}`, async () => undefined],
    ];
    for (const [method, path, body] of attempts) {
      const theirs = await bob.call(method, path, { body: await body() });
      const missing = await bob.call(method, path.replace(id, 'idn_0000000000000000000000'), { body: await body() });
      expect(theirs.status).toBe(404);
      expect(await theirs.json()).toEqual(await missing.json());
    }
    expect(await (await bob.call('GET', '/v1/identities')).json()).toEqual([]);
    expect((await bob.call('GET', `/v1/identities?after=${id}`)).status).toBe(422);
    const still = (await (await alice.call('GET', `/v1/identities/${id}`)).json()) as IdentityBody;
    expect(still).toEqual(created);
  });
});
