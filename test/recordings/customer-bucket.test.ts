// An account's own bucket for its recordings (issue 43 point 4, docs/api.md#recording-storage), on
// Postgres (docs/testing.md#engines: the bucket and the join are the point, the database only
// keeps the settings): a second S3 server stands for the customer's (customer-s3.ts, with
// authentication on), the service's own store is the run's S3. A PUT is checked by writing and
// deleting a test object and saved only then, its secret sealed; a recording joined after that
// lands in the customer's bucket and nowhere in the service's; DELETE removes it there; a bucket
// that refuses the upload fails the recording; DELETE /v1/recording-storage returns to the
// service's store; an account's retention_days overrides RECORDING_RETENTION_DAYS.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { recordingStorage, recordings } from '../../src/recordings/schema.ts';
import { open } from '../../src/recordings/secret-box.ts';
import { freshBucket, type TestBucket } from '../support/s3.ts';
import { oneEngine, startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';
import { LOOPBACK_WEBHOOKS_ENV, subscribedReceiver } from '../support/webhook-subscription.ts';
import type { WebhookReceiver } from '../support/webhooks.ts';
import { type CustomerS3, startCustomerS3 } from './customer-s3.ts';
import { cut, fragmentedMp4, probeFile, recordedSession, sendPart } from './support.ts';

const STORAGE_KEY = randomBytes(32);

describe.each(oneEngine('postgres'))("recordings in the account's own bucket on %s", (engine) => {
  let service: TestService;
  let account: TestAccount;
  let other: TestAccount;
  let bucket: TestBucket;
  let customer: CustomerS3;
  let receiver: WebhookReceiver;
  let secret: string;
  let media: Uint8Array;

  beforeAll(async () => {
    [media, customer, bucket] = await Promise.all([fragmentedMp4(2), startCustomerS3(), freshBucket()]);
    service = await startTestService(engine, {
      env: {
        ...bucket.env('svc/'),
        RECORDING_STORAGE_KEY: STORAGE_KEY.toString('base64'),
        RECORDING_RETENTION_DAYS: '0',
        RECORDING_SWEEP_INTERVAL_SECONDS: '1',
        RECORDING_FINISH_WAIT_SECONDS: '2',
        ...LOOPBACK_WEBHOOKS_ENV,
      },
    });
    [account, other] = await Promise.all([service.account(), service.account()]);
    ({ receiver, secret } = await subscribedReceiver(account, ['recording.ready', 'recording.failed']));
  }, 60_000);
  afterAll(async () => {
    receiver?.stop();
    await service?.stop();
    await customer?.stop();
  });

  const good = () => ({
    endpoint: customer.endpoint,
    bucket: customer.bucket,
    region: customer.region,
    prefix: 'calls/',
    access_key_id: customer.accessKeyId,
    secret_access_key: customer.secretAccessKey,
  });
  const put = (who: TestAccount, body: Record<string, unknown>) =>
    who.call('PUT', '/v1/recording-storage', {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
  const storageRow = async (accountId: string) =>
    (
      await service.services.database.db
        .select()
        .from(recordingStorage)
        .where(eq(recordingStorage.accountId, accountId))
    )[0];
  const refused = async (body: Record<string, unknown>) => {
    const answer = await put(account, body);
    const text = await answer.text();
    expect(answer.status).toBe(422);
    expect(text).not.toContain(customer.secretAccessKey);
    expect(await storageRow(account.accountId)).toBeUndefined();
    return (JSON.parse(text) as { detail: { loc: string[]; msg: string; type: string }[] }).detail[0]!;
  };
  const recordingOf = async (id: string, who = account) =>
    await (await who.call('GET', `/v1/sessions/${id}/recording`)).json();
  const settled = (id: string, who = account) =>
    eventually(
      async () => {
        const body = await recordingOf(id, who);
        return body.status === 'ready' || body.status === 'failed' ? body : undefined;
      },
      20_000,
      `the recording of ${id} to be joined`,
    );
  /** A recorded session of the account with one part sent and done, ended: the sweep joins it. */
  const recordOne = async (who = account) => {
    const session = await recordedSession(service, who.accountId);
    await sendPart(session, 'CB_part', cut(media, 3));
    expect((await session.done('CB_part', 3, 2000)).status).toBe(200);
    await session.end();
    return session;
  };
  const eventOf = (type: string, id: string) =>
    receiver.waitFor(type, () =>
      receiver.verified('/hooks', secret).find((event) => event.type === type && event.data.session_id === id),
    );

  test('no settings: GET answers 404', async () => {
    expect((await account.call('GET', '/v1/recording-storage')).status).toBe(404);
  });

  test('a bucket that fails its check answers 422 naming the step and the error, and nothing is saved', async () => {
    const wrongKey = await refused({ ...good(), access_key_id: 'AKIANOTAKEYATALL0000' });
    expect(wrongKey).toMatchObject({ loc: ['body', 'bucket'], type: 'storage_check_failed' });
    expect(wrongKey.msg).toStartWith(
      `writing a test object to the bucket ${customer.bucket} failed: InvalidAccessKeyId`,
    );

    const wrongSecret = await refused({ ...good(), secret_access_key: 'not-the-secret-at-all' });
    expect(wrongSecret.msg).toContain('SignatureDoesNotMatch');

    const noBucket = await refused({ ...good(), bucket: 'no-such-bucket' });
    expect(noBucket.msg).toStartWith('writing a test object to the bucket no-such-bucket failed: NoSuchBucket');

    const closed = await refused({ ...good(), endpoint: 'http://127.0.0.1:9' });
    expect(closed.msg).toStartWith(`writing a test object to the bucket ${customer.bucket} failed:`);

    const notUrl = await refused({ ...good(), endpoint: 'ftp://files.example.com' });
    expect(notUrl).toMatchObject({ loc: ['body', 'endpoint'] });

    const partial = await refused({ endpoint: customer.endpoint, bucket: customer.bucket });
    expect(partial.msg).toContain('access_key_id, secret_access_key: required with endpoint, bucket');

    expect((await refused({ ...good(), prefix: 'a/../b/' })).loc).toEqual(['body', 'prefix']);
    expect(await customer.keys()).toEqual([]);
  }, 30_000);

  test('good settings: checked, saved with the secret sealed, answered without it; no test object left', async () => {
    const answer = await put(account, good());
    expect(answer.status).toBe(200);
    const text = await answer.text();
    expect(text).not.toContain(customer.secretAccessKey);
    const expected = {
      store: 'customer',
      endpoint: customer.endpoint,
      bucket: customer.bucket,
      region: customer.region,
      prefix: 'calls/',
      access_key_id: customer.accessKeyId,
      secret_set: true,
      retention_days: null,
    };
    expect(JSON.parse(text)).toMatchObject(expected);
    const read = await account.call('GET', '/v1/recording-storage');
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject(expected);
    expect(await customer.keys()).toEqual([]);

    const row = (await storageRow(account.accountId))!;
    expect(row.secretAccessKey).not.toContain(customer.secretAccessKey);
    expect(open(STORAGE_KEY, account.accountId, row.secretAccessKey!)).toBe(customer.secretAccessKey);
    expect(() => open(randomBytes(32), account.accountId, row.secretAccessKey!)).toThrow();
    // Sealed for this account: copied onto another account's row it does not open.
    expect(() => open(STORAGE_KEY, other.accountId, row.secretAccessKey!)).toThrow();
  }, 20_000);

  test("another account neither sees nor changes one's storage", async () => {
    expect((await other.call('GET', '/v1/recording-storage')).status).toBe(404);
    expect((await other.call('DELETE', '/v1/recording-storage')).status).toBe(204);
    expect((await put(other, { retention_days: 3 })).status).toBe(200);
    expect(await (await account.call('GET', '/v1/recording-storage')).json()).toMatchObject({
      bucket: customer.bucket,
      retention_days: null,
    });
    expect((await other.call('DELETE', '/v1/recording-storage')).status).toBe(204);
    expect((await other.call('GET', '/v1/recording-storage')).status).toBe(404);
  });

  let stored: string;
  test("a recording joined now goes to the customer's bucket, and not to the service's store", async () => {
    const session = await recordOne();
    stored = session.id;
    const ready = await settled(session.id);
    const key = `calls/${session.id}.mp4`;
    expect(ready).toMatchObject({ status: 'ready', store: 'customer', object_key: key, download_url: null });
    expect(await customer.keys()).toEqual([key]);
    const bytes = await customer.client.file(key).bytes();
    expect(bytes.byteLength).toBe(ready.size_bytes);
    const copy = `${service.dataDir}/customer.mp4`;
    await Bun.write(copy, bytes);
    expect((await probeFile(copy)).streams.map((s) => s.codec_name).sort()).toEqual(['aac', 'h264']);
    // Neither the file nor the chunks stay in the service's store.
    await eventually(
      async () => (await bucket.keys(`svc/recordings/${session.id}/`)).length === 0,
      5000,
      'chunks gone',
    );
    expect(await bucket.keys('svc/recordings/')).toEqual([]);

    const event = await eventOf('recording.ready', session.id);
    expect(event.data).toMatchObject({ session_id: session.id, store: 'customer', object_key: key });
  }, 40_000);

  test("DELETE of the recording removes its file from the customer's bucket", async () => {
    expect((await account.call('DELETE', `/v1/sessions/${stored}/recording`)).status).toBe(204);
    expect(await customer.keys()).toEqual([]);
    const gone = await recordingOf(stored);
    expect(gone).toMatchObject({ store: 'customer', object_key: `calls/${stored}.mp4` });
    expect(gone.deleted_at).not.toBeNull();
  });

  test('a bucket that refuses the upload fails the recording, naming the bucket, and recording.failed is sent', async () => {
    const before = await recordOne();
    expect(await settled(before.id)).toMatchObject({ status: 'ready', store: 'customer' });
    // The saved bucket went away on the customer's side since it was checked.
    await service.services.database.db
      .update(recordingStorage)
      .set({ bucket: 'removed-since' })
      .where(eq(recordingStorage.accountId, account.accountId));
    const session = await recordOne();
    const failed = await settled(session.id);
    expect(failed.status).toBe('failed');
    expect(failed.reason).toStartWith(
      `the recording could not be stored in the bucket removed-since at ${customer.endpoint}: NoSuchBucket`,
    );
    expect(failed.reason).not.toContain(customer.secretAccessKey);
    await eventually(
      async () => (await bucket.keys(`svc/recordings/${session.id}/`)).length === 0,
      5000,
      'chunks gone',
    );
    expect((await eventOf('recording.failed', session.id)).data.reason).toBe(failed.reason);
    // A file in a bucket the settings no longer name is not deleted elsewhere: 409, and it stays.
    const refusedDelete = await account.call('DELETE', `/v1/sessions/${before.id}/recording`);
    expect(refusedDelete.status).toBe(409);
    expect((await refusedDelete.json()).detail).toBe(
      `The file is in the bucket ${customer.endpoint}/${customer.bucket}, which is no longer this account's recording storage: delete calls/${before.id}.mp4 there`,
    );
    expect(await customer.keys()).toEqual([`calls/${before.id}.mp4`]);
  }, 40_000);

  test("DELETE /v1/recording-storage: new recordings go to the service's store again", async () => {
    expect((await account.call('DELETE', '/v1/recording-storage')).status).toBe(204);
    expect((await account.call('GET', '/v1/recording-storage')).status).toBe(404);
    const session = await recordOne();
    const ready = await settled(session.id);
    expect(ready).toMatchObject({ status: 'ready', store: 'service', object_key: null });
    expect(ready.download_url).toBeString();
    const file = `svc/recordings/${session.id}/recording.mp4`;
    // The chunks go just after the file is stored.
    await eventually(
      async () => (await bucket.keys(`svc/recordings/${session.id}/`)).join() === file,
      5000,
      'chunks gone',
    );
    // Nothing new in the customer's bucket (the one file there is the earlier recording's).
    expect(await customer.keys()).not.toContain(`calls/${session.id}.mp4`);
    expect((await customer.keys()).length).toBe(1);
  }, 40_000);

  test("an account's retention_days overrides RECORDING_RETENTION_DAYS (here 0: kept)", async () => {
    const [mine, theirs] = await Promise.all([recordOne(account), recordOne(other)]);
    await Promise.all([settled(mine.id), settled(theirs.id, other)]);
    const saved = await put(account, { retention_days: 2 });
    expect(saved.status).toBe(200);
    expect(await saved.json()).toMatchObject({ store: 'service', bucket: null, secret_set: false, retention_days: 2 });
    const db = service.services.database.db;
    await db
      .update(recordings)
      .set({ readyAt: sql`now() - make_interval(days => 3)` })
      .where(sql`${recordings.sessionId} in (${mine.id}, ${theirs.id})`);
    await eventually(async () => (await recordingOf(mine.id)).deleted_at ?? undefined, 10_000, 'the retention sweep');
    expect(await bucket.keys(`svc/recordings/${mine.id}/`)).toEqual([]);
    // The other account keeps the service's default (0: kept).
    await Bun.sleep(1500);
    expect((await recordingOf(theirs.id, other)).deleted_at).toBeNull();
    expect(await bucket.keys(`svc/recordings/${theirs.id}/recording.mp4`)).toEqual([
      `svc/recordings/${theirs.id}/recording.mp4`,
    ]);
  }, 40_000);
});
