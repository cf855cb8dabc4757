// An account's own bucket (docs/api.md#recording-storage): the S3 client on it (Bun's, as the
// service's own store, src/assets/store.ts), the check a PUT runs before saving (write a test
// object under the prefix, then delete it), and where a recording goes in it. What the bucket's
// server says is passed on with the step that failed, never the secret. The endpoint follows the
// webhooks' address rules (src/webhooks/destinations.ts): a customer cannot point the service at
// its own network unless the operator allows private addresses (WEBHOOKS_ALLOW_PRIVATE), checked
// when saved and again before every upload. Bun's client cannot be pinned to the judged address as
// webhooks are: https, required unless private addresses are allowed, makes a name that rebinds to
// an inside host fail on its certificate instead.
import { checkDestination, DestinationRefused, type Resolver } from '../webhooks/index.ts';

export interface BucketSettings {
  endpoint: string;
  bucket: string;
  region: string | null;
  prefix: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface EndpointRules {
  /** WEBHOOKS_ALLOW_PRIVATE: private addresses, and plain http, allowed. */
  allowPrivate: boolean;
  resolve: Resolver;
}

/** What a bucket's server said, or that it said nothing, for the step that failed. */
export class BucketFailed extends Error {
  constructor(
    readonly step: 'endpoint' | 'write' | 'delete' | 'upload',
    detail: string,
  ) {
    super(detail);
  }
}

/** A call to the bucket's server that has not answered by then is failed (a black-holed address would hang). */
const CALL_TIMEOUT_MS = 15_000;
/** An upload carries a whole recording: it gets longer. */
const UPLOAD_TIMEOUT_MS = 10 * 60_000;

/** A recording's key in the account's bucket. */
export function customerFileKey(prefix: string, sessionId: string): string {
  return `${prefix}${sessionId}.mp4`;
}

/** Where a recording sits: endpoint and bucket, kept on the recording so its file is removed where it went. */
export function bucketLocation(settings: Pick<BucketSettings, 'endpoint' | 'bucket'>): string {
  return `${settings.endpoint.replace(/\/+$/, '')}/${settings.bucket}`;
}

/** The server's code and message, without anything of the secret (Bun's messages carry none; a server's might echo it). */
function describe(error: unknown, secret: string): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = [typeof code === 'string' ? code : undefined, typeof message === 'string' ? message : String(error)]
    .filter(Boolean)
    .join(': ');
  return secret ? text.split(secret).join('[secret]') : text;
}

async function within<T>(ms: number, call: Promise<T>): Promise<T> {
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([call, late]);
  } finally {
    clearTimeout(timer);
  }
}

export class CustomerBucket {
  private readonly client: Bun.S3Client;

  constructor(readonly settings: BucketSettings) {
    this.client = new Bun.S3Client({
      endpoint: settings.endpoint,
      bucket: settings.bucket,
      region: settings.region ?? undefined,
      accessKeyId: settings.accessKeyId,
      secretAccessKey: settings.secretAccessKey,
    });
  }

  get location(): string {
    return bucketLocation(this.settings);
  }

  /** Throws BucketFailed('endpoint') unless the endpoint may be called now. */
  async checkEndpoint(rules: EndpointRules): Promise<void> {
    const url = new URL(this.settings.endpoint);
    if (url.protocol !== 'https:' && !(rules.allowPrivate && url.protocol === 'http:'))
      throw new BucketFailed('endpoint', 'the endpoint must be an https URL');
    try {
      await checkDestination(this.settings.endpoint, rules);
    } catch (error) {
      if (error instanceof DestinationRefused) throw new BucketFailed('endpoint', error.message);
      throw error;
    }
  }

  /** Writes a small object under the prefix and deletes it: what saving the settings requires. */
  async check(rules: EndpointRules): Promise<void> {
    await this.checkEndpoint(rules);
    const key = `${this.settings.prefix}likeness-check-${crypto.randomUUID()}.txt`;
    await this.call('write', () =>
      this.client.write(key, 'Likeness checks it can write recordings here; this object is deleted at once.\n', {
        type: 'text/plain',
      }),
    );
    await this.call('delete', () => this.client.delete(key));
  }

  async upload(key: string, file: string, rules: EndpointRules): Promise<void> {
    await this.checkEndpoint(rules);
    // Bun streams a file it is given (a multipart upload when large) rather than holding it in memory.
    await this.call('upload', () => this.client.write(key, Bun.file(file), { type: 'video/mp4' }), UPLOAD_TIMEOUT_MS);
  }

  async delete(key: string, rules: EndpointRules): Promise<void> {
    await this.checkEndpoint(rules);
    await this.call('delete', () => this.client.delete(key));
  }

  private async call(step: BucketFailed['step'], run: () => Promise<unknown>, ms = CALL_TIMEOUT_MS): Promise<void> {
    try {
      await within(ms, run());
    } catch (error) {
      throw new BucketFailed(step, describe(error, this.settings.secretAccessKey));
    }
  }
}
