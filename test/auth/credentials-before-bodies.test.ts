// Credentials before bodies (issue 16): a request with a body to /v1 or the console's API whose
// credentials do not hold is answered before its body is read, so an anonymous client cannot
// make the service buffer and parse tens of megabytes. Shown with a body that holds back after
// its first megabyte until an answer arrives: without credentials the answer comes while the
// rest is unsent; with a valid key the service waits for all of it (the route needs the body).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';

let service: TestService;
let account: TestAccount;
beforeAll(async () => {
  service = await startTestService('pglite');
  account = await service.account();
});
afterAll(() => service.stop());

const MB = 1024 * 1024;
const BOUNDARY = 'likenessboundary';

interface Upload {
  status: number;
  detail: unknown;
  /** Bytes the client had handed over when the answer arrived. */
  sentWhenAnswered: number;
}

/**
 * POSTs a multipart upload of `totalMb` (a photo field of zeros, chunked) whose body holds
 * back after its first megabyte until the answer arrives or `holdMs` passed.
 */
async function slowUpload(
  path: string,
  headers: Record<string, string>,
  totalMb = 30,
  holdMs = 3_000,
): Promise<Upload> {
  let sent = 0;
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
    setTimeout(resolve, holdMs);
  });
  const head = new TextEncoder().encode(
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="image"; filename="big.png"\r\ncontent-type: image/png\r\n\r\n`,
  );
  const tail = new TextEncoder().encode(`\r\n--${BOUNDARY}--\r\n`);
  let chunks = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (chunks === 1) await released;
      if (chunks === totalMb) {
        controller.enqueue(tail);
        controller.close();
        return;
      }
      const chunk = chunks === 0 ? Buffer.concat([head, new Uint8Array(MB - head.length)]) : new Uint8Array(MB);
      chunks++;
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
  const response = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...headers },
    body,
    // @ts-expect-error Bun and undici stream request bodies with duplex 'half'.
    duplex: 'half',
  });
  const sentWhenAnswered = sent;
  release();
  const text = await response.text();
  return {
    status: response.status,
    detail: (JSON.parse(text || '{}') as { detail?: unknown }).detail,
    sentWhenAnswered,
  };
}

describe('credentials before bodies', () => {
  test('no key, a wrong key, or no console sign-in: 401 before the upload is read', async () => {
    for (const [path, headers] of [
      ['/v1/identities', {}],
      ['/v1/identities', { authorization: 'Bearer lk_wrong' }],
      ['/v1/identities', { 'x-api-key': 'lk_wrong' }],
      ['/console/api/identities', {}],
    ] as const) {
      const upload = await slowUpload(path, headers);
      expect(upload.status).toBe(401);
      expect(typeof upload.detail).toBe('string');
      // Answered with 29 of the 30 megabytes still unsent.
      expect(upload.sentWhenAnswered).toBeLessThanOrEqual(2 * MB);
    }
  }, 60_000);

  test('with a valid key the service reads the whole body before it answers (the check above is not a timeout)', async () => {
    const upload = await slowUpload('/v1/identities', { authorization: `Bearer ${account.apiKey}` }, 30, 1_500);
    expect(upload.sentWhenAnswered).toBeGreaterThanOrEqual(30 * MB);
    expect(upload.status).toBe(422); // a form without name or prompt
  }, 60_000);

  test('the console’s sign-in and sign-up take no credentials, as before', async () => {
    const response = await fetch(`${service.url}/console/api/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong password' }),
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { detail: string }).detail).toBe('Wrong email or password');
  });
});
