// The rules of an account's own bucket that need no server (docs/api.md#recording-storage): its
// endpoint follows the webhooks' address rules, https unless private addresses are allowed; its
// secret is sealed with a random IV, so the same secret never reads the same twice.
import { describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { BucketFailed, CustomerBucket } from '../../src/recordings/customer-bucket.ts';
import { open, seal } from '../../src/recordings/secret-box.ts';

const bucketAt = (endpoint: string) =>
  new CustomerBucket({
    endpoint,
    bucket: 'b',
    region: null,
    prefix: '',
    accessKeyId: 'id',
    secretAccessKey: 'secret',
  });
const publicResolver = async () => ['93.184.216.34'];
const privateResolver = async () => ['10.0.0.8'];

describe("an account's bucket endpoint", () => {
  test('plain http is refused unless private addresses are allowed', async () => {
    const refused = await bucketAt('http://s3.example.com')
      .checkEndpoint({ allowPrivate: false, resolve: publicResolver })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BucketFailed);
    expect((refused as BucketFailed).step).toBe('endpoint');
    expect((refused as BucketFailed).message).toBe('the endpoint must be an https URL');
    await bucketAt('http://127.0.0.1:9000').checkEndpoint({ allowPrivate: true, resolve: publicResolver });
  });

  test('a host on a private address is refused, as webhooks are', async () => {
    const byName = await bucketAt('https://minio.internal')
      .checkEndpoint({ allowPrivate: false, resolve: privateResolver })
      .catch((error: unknown) => error);
    expect((byName as BucketFailed).message).toContain('does not resolve to a public address');
    const literal = await bucketAt('https://169.254.169.254')
      .checkEndpoint({ allowPrivate: false, resolve: publicResolver })
      .catch((error: unknown) => error);
    expect((literal as BucketFailed).message).toContain('is not a public address');
    await bucketAt('https://s3.example.com').checkEndpoint({ allowPrivate: false, resolve: publicResolver });
  });
});

describe("an account's bucket secret at rest", () => {
  test('sealed with a random IV, opened only with its key and for its account', () => {
    const key = randomBytes(32);
    const [a, b] = [seal(key, 'acc_1', 'top-secret'), seal(key, 'acc_1', 'top-secret')];
    expect(a).not.toBe(b);
    expect(a).not.toContain('top-secret');
    expect(open(key, 'acc_1', a)).toBe('top-secret');
    expect(() => open(randomBytes(32), 'acc_1', a)).toThrow();
    expect(() => open(key, 'acc_2', a)).toThrow();
    const [version, iv, tag, ciphertext] = a.split('.');
    const flipped = Buffer.from(ciphertext!, 'base64url');
    flipped[0]! ^= 1;
    expect(() => open(key, 'acc_1', [version, iv, tag, flipped.toString('base64url')].join('.'))).toThrow();
  });
});
