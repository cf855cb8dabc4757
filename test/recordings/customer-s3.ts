// A second S3 server standing for a customer's (issue 43: "tested against a second S3 server"):
// moto again, from the venv the bootstrap installed (src/bootstrap/s3.mjs), on a port of its
// own, with authentication on, so wrong credentials are refused as a real bucket would. moto
// lets the first INITIAL_NO_AUTH_ACTION_COUNT requests in unsigned: they make the bucket, a user,
// its policy and its key; every later request must be signed with that key.
import { MOTO_LAUNCHER, venvPython } from '../../src/bootstrap/s3.mjs';
import { eventually } from '../support/visitor.ts';

const SETUP_REQUESTS = 4;

export interface CustomerS3 {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A signed client on the bucket, to look at what the service left there. */
  client: Bun.S3Client;
  keys(prefix?: string): Promise<string[]>;
  stop(): Promise<void>;
}

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

/** moto's IAM speaks the query API; unsigned, as the setup requests may be. */
async function iam(endpoint: string, params: Record<string, string>): Promise<string> {
  const answer = await fetch(`${endpoint}/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization:
        'AWS4-HMAC-SHA256 Credential=setup/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: new URLSearchParams({ ...params, Version: '2010-05-08' }),
  });
  const text = await answer.text();
  if (!answer.ok) throw new Error(`IAM ${params.Action} answered ${answer.status}: ${text}`);
  return text;
}

export async function startCustomerS3(): Promise<CustomerS3> {
  const port = freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child = Bun.spawn([venvPython(), '-c', MOTO_LAUNCHER, '-H', '127.0.0.1', '-p', String(port)], {
    env: { ...process.env, INITIAL_NO_AUTH_ACTION_COUNT: String(SETUP_REQUESTS), PYTHONUNBUFFERED: '1' },
    stdout: 'ignore',
    stderr: 'ignore',
  });
  try {
    await eventually(
      async () =>
        (await fetch(`${endpoint}/moto-api/`).then(
          (r) => r.ok,
          () => false,
        )) || undefined,
      30_000,
      'the customer S3 server to answer',
    );
  } catch (error) {
    child.kill();
    throw error;
  }
  // moto-api is not counted among the actions; these four are.
  const bucket = 'customer-recordings';
  const created = await fetch(`${endpoint}/${bucket}`, { method: 'PUT' });
  if (!created.ok) throw new Error(`creating the customer's bucket answered ${created.status}`);
  await iam(endpoint, { Action: 'CreateUser', UserName: 'likeness' });
  await iam(endpoint, {
    Action: 'PutUserPolicy',
    UserName: 'likeness',
    PolicyName: 'recordings',
    PolicyDocument: JSON.stringify({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: 's3:*', Resource: '*' }],
    }),
  });
  const key = await iam(endpoint, { Action: 'CreateAccessKey', UserName: 'likeness' });
  const accessKeyId = /<AccessKeyId>([^<]+)</.exec(key)![1]!;
  const secretAccessKey = /<SecretAccessKey>([^<]+)</.exec(key)![1]!;
  const region = 'us-east-1';
  const client = new Bun.S3Client({ endpoint, bucket, region, accessKeyId, secretAccessKey });
  return {
    endpoint,
    bucket,
    region,
    accessKeyId,
    secretAccessKey,
    client,
    async keys(prefix) {
      const page = await client.list(prefix ? { prefix } : {});
      return (page.contents ?? []).map((item) => item.key).sort();
    },
    async stop() {
      child.kill();
      await child.exited;
    },
  };
}
