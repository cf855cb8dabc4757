// The S3 asset store against a real S3-speaking server (moto, started by `npm test`):
// the store on its own, then the whole service configured with S3_* settings.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AssetStore, createAssetStore, S3AssetStore } from '../../src/assets/store.ts';
import { loadConfig } from '../../src/config.ts';
import * as fx from '../fixtures/index.ts';
import { file, form, type IdentityBody, identityForm } from '../support/forms.ts';
import { freshBucket, type TestBucket } from '../support/s3.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';

const bytesOf = async (blob: Blob | undefined) => new Uint8Array(await blob!.arrayBuffer());
const randomBytes = (length: number) => {
  const bytes = new Uint8Array(length);
  for (let offset = 0; offset < length; offset += 65_536)
    crypto.getRandomValues(bytes.subarray(offset, offset + 65_536));
  return bytes;
};

describe('S3AssetStore', () => {
  let bucket: TestBucket;
  let store: S3AssetStore;
  beforeAll(async () => {
    bucket = await freshBucket();
    store = new S3AssetStore(bucket.settings());
  });

  test('put then get returns the bytes, and the object carries its content type', async () => {
    const image = randomBytes(300_000);
    const audio = randomBytes(20_000);
    await store.put('identities/idn_put/tok/image.jpg', image, 'image/jpeg');
    await store.put('identities/idn_put/tok/voice.wav', audio, 'audio/wav');
    expect(await bytesOf(await store.get('identities/idn_put/tok/image.jpg'))).toEqual(image);
    expect(await bytesOf(await store.get('identities/idn_put/tok/voice.wav'))).toEqual(audio);
    expect((await bucket.client.file('identities/idn_put/tok/image.jpg').stat()).type).toBe('image/jpeg');
    expect((await bucket.client.file('identities/idn_put/tok/voice.wav').stat()).type).toBe('audio/wav');
  });

  test('a key written twice keeps the last bytes', async () => {
    await store.put('identities/idn_twice/a.png', new Uint8Array([1]), 'image/png');
    await store.put('identities/idn_twice/a.png', new Uint8Array([2, 3]), 'image/png');
    expect(await bytesOf(await store.get('identities/idn_twice/a.png'))).toEqual(new Uint8Array([2, 3]));
  });

  test('get of a missing key is undefined', async () => {
    expect(await store.get('identities/idn_none/image.jpg')).toBeUndefined();
  });

  test('what get returns can be served as a Response with headers (as /assets/* does)', async () => {
    const bytes = randomBytes(1000);
    await store.put('identities/idn_serve/image.jpg', bytes, 'image/jpeg');
    const response = new Response(await store.get('identities/idn_serve/image.jpg'), {
      headers: { 'content-type': 'image/jpeg' },
    });
    expect(response.status).toBe(200);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes);
  });

  test('putFile streams a file in (multipart past 5 MiB); open reads just the ranges asked; a missing key opens as undefined', async () => {
    const bytes = randomBytes(12 * 1024 * 1024 + 17);
    const path = join(tmpdir(), `likeness-put-file-${process.pid}.mp4`);
    await Bun.write(path, bytes);
    try {
      await store.putFile('recordings/ses_file/recording.mp4', path, 'video/mp4');
    } finally {
      await rm(path, { force: true });
    }
    expect((await bucket.client.file('recordings/ses_file/recording.mp4').stat()).type).toBe('video/mp4');
    const opened = (await store.open('recordings/ses_file/recording.mp4'))!;
    expect(opened.size).toBe(bytes.length);
    const read = async (start: number, end: number) =>
      new Uint8Array(await new Response(opened.read(start, end)).arrayBuffer());
    expect(await read(0, 100)).toEqual(bytes.subarray(0, 100));
    expect(await read(bytes.length - 17, bytes.length)).toEqual(bytes.subarray(bytes.length - 17));
    expect(await read(5 * 1024 * 1024 - 3, 5 * 1024 * 1024 + 3)).toEqual(
      bytes.subarray(5 * 1024 * 1024 - 3, 5 * 1024 * 1024 + 3),
    );
    expect(await store.open('recordings/ses_none/recording.mp4')).toBeUndefined();
  });

  test('list gives the keys under a prefix, sorted, and nothing from a sibling prefix', async () => {
    const keys = ['identities/idn_l/b/voice.wav', 'identities/idn_l/a/image.jpg', 'identities/idn_l/a/render.png'];
    for (const key of keys) await store.put(key, new Uint8Array([1]), 'application/octet-stream');
    await store.put('identities/idn_lx/a/image.jpg', new Uint8Array([1]), 'image/jpeg');
    expect(await store.list('identities/idn_l/')).toEqual([...keys].sort());
    expect(await store.list('identities/idn_l/a/')).toEqual([
      'identities/idn_l/a/image.jpg',
      'identities/idn_l/a/render.png',
    ]);
    expect(await store.list('identities/idn_empty/')).toEqual([]);
  });

  test('list follows pagination past 1000 keys', async () => {
    const keys = Array.from({ length: 1001 }, (_, i) => `identities/idn_many/${String(i).padStart(4, '0')}.png`);
    const payload = new Uint8Array([7]);
    for (let i = 0; i < keys.length; i += 16)
      await Promise.all(keys.slice(i, i + 16).map((key) => store.put(key, payload, 'image/png')));
    expect(await store.list('identities/idn_many/')).toEqual(keys);
  });

  test('delete removes one key; deleting a missing key is not an error', async () => {
    await store.put('identities/idn_del/a.png', new Uint8Array([1]), 'image/png');
    await store.put('identities/idn_del/b.png', new Uint8Array([1]), 'image/png');
    await store.delete('identities/idn_del/a.png');
    expect(await store.get('identities/idn_del/a.png')).toBeUndefined();
    expect(await store.list('identities/idn_del/')).toEqual(['identities/idn_del/b.png']);
    await store.delete('identities/idn_del/a.png');
  });

  test('deletePrefix removes everything under the prefix and nothing beside it', async () => {
    for (const key of [
      'identities/idn_dp/t1/image.jpg',
      'identities/idn_dp/t1/render.png',
      'identities/idn_dp/t2/voice.wav',
      'identities/idn_dpx/t/image.jpg',
    ]) {
      await store.put(key, new Uint8Array([1]), 'application/octet-stream');
    }
    await store.deletePrefix('identities/idn_dp/');
    expect(await bucket.keys('identities/idn_dp')).toEqual(['identities/idn_dpx/t/image.jpg']);
    await store.deletePrefix('identities/idn_dp/'); // nothing left: still fine
  });

  test('S3_PREFIX: keys live under it in the bucket, are listed without it, and other prefixes stay apart', async () => {
    const env = (prefix: string) => ({ DATA_DIR: '/nonexistent', ...bucket.env(prefix) });
    const a: AssetStore = createAssetStore({ s3: loadConfig(env('deploy-a/')).s3, dataDir: '/nonexistent' });
    const b: AssetStore = createAssetStore({ s3: loadConfig(env('deploy-b/')).s3, dataDir: '/nonexistent' });
    expect([a.kind, b.kind]).toEqual(['s3', 's3']);
    await a.put('identities/idn_p/image.jpg', new Uint8Array([1, 2]), 'image/jpeg');
    await b.put('identities/idn_p/image.jpg', new Uint8Array([3]), 'image/jpeg');
    expect(await bucket.keys('deploy-')).toEqual([
      'deploy-a/identities/idn_p/image.jpg',
      'deploy-b/identities/idn_p/image.jpg',
    ]);
    expect((await bucket.client.file('deploy-a/identities/idn_p/image.jpg').stat()).type).toBe('image/jpeg');
    expect(await a.list('identities/idn_p/')).toEqual(['identities/idn_p/image.jpg']);
    expect(await bytesOf(await a.get('identities/idn_p/image.jpg'))).toEqual(new Uint8Array([1, 2]));
    expect(await bytesOf(await b.get('identities/idn_p/image.jpg'))).toEqual(new Uint8Array([3]));
    expect(await store.get('identities/idn_p/image.jpg')).toBeUndefined(); // the unprefixed store sees neither
    await a.deletePrefix('identities/');
    expect(await bucket.keys('deploy-')).toEqual(['deploy-b/identities/idn_p/image.jpg']);
  });

  test('an unknown bucket is an error, not an empty store', async () => {
    const missing = new S3AssetStore({ ...bucket.settings(), bucket: `${bucket.name}-missing` });
    await expect(missing.put('identities/x.png', new Uint8Array([1]), 'image/png')).rejects.toMatchObject({
      code: 'NoSuchBucket',
    });
    await expect(missing.get('identities/x.png')).rejects.toMatchObject({ code: 'NoSuchBucket' });
  });
});

describe('S3AssetStore refuses unsafe keys', () => {
  let bucket: TestBucket;
  let store: S3AssetStore;
  beforeAll(async () => {
    bucket = await freshBucket();
    store = new S3AssetStore(bucket.settings());
  });

  test.each([
    '../outside.jpg',
    'identities/../../etc/passwd',
    'identities/./x.jpg',
    '/identities/x.jpg',
    'identities//x.jpg',
    'identities/x y.jpg',
    'identities\\x.jpg',
    '.hidden',
    '',
  ])('%p, before any request', async (key) => {
    await expect(store.put(key, new Uint8Array([1]), 'image/jpeg')).rejects.toThrow('Unsafe asset key');
    await expect(store.get(key)).rejects.toThrow('Unsafe asset key');
    await expect(store.delete(key)).rejects.toThrow('Unsafe asset key');
    await expect(store.deletePrefix(`${key}/`)).rejects.toThrow('Unsafe asset key');
    await expect(store.list(`${key}/`)).rejects.toThrow('Unsafe asset key');
    expect(await bucket.keys()).toEqual([]);
  });
});

async function waitForStatus(account: TestAccount, id: string, status: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = (await (await account.call('GET', `/v1/identities/${id}/status`)).json()) as { status: string };
    if (body.status === status) return;
    if (Date.now() > deadline) throw new Error(`identity ${id} stayed ${body.status}`);
    await Bun.sleep(50);
  }
}

describe('identities on an S3 asset store, end to end', () => {
  const PREFIX = 'svc/';
  let bucket: TestBucket;
  let service: TestService;
  let account: TestAccount;
  beforeAll(async () => {
    bucket = await freshBucket();
    service = await startTestService('pglite', { env: bucket.env(PREFIX) });
    account = await service.account({ credits: 10_000 });
  });
  afterAll(() => service?.stop());

  /** Bucket key of an /assets/* URL. */
  const keyOf = (url: string) => PREFIX + new URL(url).pathname.replace(/^\/assets\//, '');
  const create = async (fields: Parameters<typeof identityForm>[0] = {}, who = account) =>
    who.call('POST', '/v1/identities', { body: await identityForm(fields) });

  test('the service takes its store from the S3_* settings', () => {
    expect(service.services.store.kind).toBe('s3');
  });

  test('create stores the image and voice in the bucket and serves them through /assets/*', async () => {
    const voice = fx.wav({ seconds: 5 });
    const response = await create({ audio: file(voice, 'voice.wav', 'audio/wav') });
    expect(response.status).toBe(200);
    const body = (await response.json()) as IdentityBody;

    const keys = await bucket.keys(`${PREFIX}identities/${body.identity_id}/`);
    expect(keys).toContain(keyOf(body.image));
    expect(keys).toContain(keyOf(body.audio!));
    expect(keys.some((key) => key.endsWith('/render.png'))).toBe(true);
    expect(await bucket.keys('identities/')).toEqual([]); // everything under S3_PREFIX
    expect(existsSync(join(service.dataDir, 'assets'))).toBe(false); // nothing went to the local folder

    expect((await bucket.client.file(keyOf(body.image)).stat()).type).toBe('image/jpeg');
    expect((await bucket.client.file(keyOf(body.audio!)).stat()).type).toBe('audio/wav');

    const image = await fetch(body.image);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/jpeg');
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(await bucket.client.file(keyOf(body.image)).bytes());

    const audio = await fetch(body.audio!);
    expect(audio.status).toBe(200);
    expect(audio.headers.get('content-type')).toBe('audio/wav');
    expect(new Uint8Array(await audio.arrayBuffer()) as Uint8Array).toEqual(voice);

    expect(
      (
        await fetch(
          service.services.assetLinks.url(
            new URL(body.image).pathname.replace(/^\/assets\//, '').replace(/image\.jpg$/, 'missing.jpg'),
          ),
        )
      ).status,
    ).toBe(404);
  });

  test('a retrain reads its upload back from S3 and replaces the objects', async () => {
    const created = (await (await create()).json()) as IdentityBody;
    const response = await account.call('PATCH', `/v1/identities/${created.identity_id}`, {
      body: form({ prompt: 'Retrained', image: file(fx.portraitPng(), 'b.png', 'image/png') }),
    });
    expect(response.status).toBe(202);
    await waitForStatus(account, created.identity_id, 'ready');
    const after = (await (await account.call('GET', `/v1/identities/${created.identity_id}`)).json()) as IdentityBody;
    expect(after.image).not.toBe(created.image);
    // The replaced objects go once the identity is ready again (src/identities/retraining.ts).
    const keys = await eventually(
      async () => {
        const now = await bucket.keys(`${PREFIX}identities/${created.identity_id}/`);
        return now.includes(keyOf(created.image)) ? undefined : now;
      },
      10_000,
      'the replaced objects to go',
    );
    expect(keys).toContain(keyOf(after.image));
    expect(keys.filter((key) => key.includes('/upload.'))).toEqual([]);
    expect((await fetch(after.image)).status).toBe(200);
    expect((await fetch(created.image)).status).toBe(404);
  });

  test('DELETE removes every object of the identity', async () => {
    const created = (await (await create({ audio: file(fx.wav({ seconds: 5 }), 'v.wav') })).json()) as IdentityBody;
    expect(await bucket.keys(`${PREFIX}identities/${created.identity_id}/`)).not.toEqual([]);
    expect((await account.call('DELETE', `/v1/identities/${created.identity_id}`)).status).toBe(204);
    expect(await bucket.keys(`${PREFIX}identities/${created.identity_id}/`)).toEqual([]);
    expect((await fetch(created.image)).status).toBe(404);
    expect((await fetch(created.audio!)).status).toBe(404);
  });

  test('an account that cannot pay gets 402 and no object is written', async () => {
    const poor = await service.account({ credits: 49 });
    const before = await bucket.keys();
    expect((await create({ audio: file(fx.wav({ seconds: 5 }), 'v.wav') }, poor)).status).toBe(402);
    expect(await bucket.keys()).toEqual(before);
  });

  test('an undecodable voice gets 422 and no object is left', async () => {
    const before = await bucket.keys();
    const rowsBefore = await service.count('identities');
    const response = await create({ audio: file(fx.wavGarbage(), 'v.wav', 'audio/wav') });
    expect(response.status).toBe(422);
    expect(await bucket.keys()).toEqual(before);
    expect(await service.count('identities')).toBe(rowsBefore);
  });
});
