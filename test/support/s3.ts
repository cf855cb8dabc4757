// S3 for the suites. `npm test` starts a throwaway moto server and passes its address in
// TEST_S3_ENDPOINT; each suite makes its own bucket there.
import type { S3Settings } from '../../src/config.ts';

export function testS3Endpoint(): string {
  const endpoint = process.env.TEST_S3_ENDPOINT;
  if (!endpoint) {
    throw new Error(
      'TEST_S3_ENDPOINT is not set: run the suites with `npm test`, which starts a throwaway S3 server (moto)',
    );
  }
  return endpoint;
}

/** moto accepts any credentials; these only have to be present for the client to sign. */
export const TEST_S3_CREDENTIALS = {
  accessKeyId: 'likeness-test',
  secretAccessKey: 'likeness-test-secret',
  region: 'us-east-1',
};

export interface TestBucket {
  name: string;
  endpoint: string;
  /** A client of its own on the bucket, to look behind the store's back. */
  client: Bun.S3Client;
  /** Settings for S3AssetStore on this bucket. */
  settings(prefix?: string): S3Settings;
  /** The service's S3_* environment for this bucket. */
  env(prefix?: string): Record<string, string>;
  /** Every key in the bucket, whatever its prefix (following pagination). */
  keys(prefix?: string): Promise<string[]>;
}

/**
 * Creates an empty, uniquely named bucket. Bun's S3 client has no CreateBucket call, so
 * this is the API's own request: PUT /<bucket> (path-style, as Bun addresses moto).
 */
export async function freshBucket(): Promise<TestBucket> {
  const endpoint = testS3Endpoint();
  const name = `likeness-test-${crypto.randomUUID().slice(0, 18)}`;
  const created = await fetch(`${endpoint}/${name}`, { method: 'PUT' });
  if (!created.ok)
    throw new Error(`creating bucket ${name} at ${endpoint} answered ${created.status}: ${await created.text()}`);
  const client = new Bun.S3Client({ ...TEST_S3_CREDENTIALS, endpoint, bucket: name });
  const settings = (prefix = ''): S3Settings => ({ bucket: name, endpoint, ...TEST_S3_CREDENTIALS, prefix });
  return {
    name,
    endpoint,
    client,
    settings,
    env: (prefix = '') => ({
      S3_BUCKET: name,
      S3_ENDPOINT: endpoint,
      S3_REGION: TEST_S3_CREDENTIALS.region,
      S3_ACCESS_KEY_ID: TEST_S3_CREDENTIALS.accessKeyId,
      S3_SECRET_ACCESS_KEY: TEST_S3_CREDENTIALS.secretAccessKey,
      S3_PREFIX: prefix,
    }),
    async keys(prefix) {
      const keys: string[] = [];
      let continuationToken: string | undefined;
      do {
        const page = await client.list({ ...(prefix ? { prefix } : {}), continuationToken });
        keys.push(...(page.contents ?? []).map((item) => item.key));
        continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
      } while (continuationToken);
      return keys.sort();
    },
  };
}
