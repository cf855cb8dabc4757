// A delivery connects to the address its check judged: the name is resolved once per attempt
// and the request goes to that answer, carrying the name as the Host header and, over https, as
// the TLS server name the certificate must match. What is read of an answer is bounded. The
// receivers are on loopback, so the pinning tests run with WEBHOOKS_ALLOW_PRIVATE, which skips
// the public-address rule but pins all the same.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { generate } from 'selfsigned';
import { WebhookSender } from '../../src/webhooks/delivery.ts';
import { DestinationRefused, type Resolver } from '../../src/webhooks/destinations.ts';
import { type PinnedRequest, pinnedFetch } from '../../src/webhooks/pinned-fetch.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { addWebhook, type Delivery, deliveriesOf, latestDelivery, WebhookReceiver } from '../support/webhooks.ts';

const MADE_UP_HOST = 'hooks.made-up.test';

/** A self-signed certificate for `name` only, so a test can trust it alone. */
async function selfSignedCertificate(name: string): Promise<{ cert: string; key: string }> {
  const made = await generate([{ name: 'commonName', value: name }], {
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 2 * 86_400_000),
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: name }] }],
  });
  return { cert: made.cert, key: made.private };
}

/** An https receiver on loopback that records the TLS server name and Host header of each request. */
class TlsReceiver {
  readonly seen: { serverName: string | false | null | undefined; host: string | undefined; path: string }[] = [];
  readonly #server: Server;
  constructor(certificate: { cert: string; key: string }) {
    this.#server = createServer(certificate, (request, response) => {
      this.seen.push({
        serverName: (request.socket as TLSSocket).servername,
        host: request.headers.host,
        path: request.url ?? '',
      });
      request.resume();
      response.writeHead(204).end();
    });
  }
  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return (this.#server.address() as { port: number }).port;
  }
  close(): void {
    this.#server.close();
    this.#server.closeAllConnections();
  }
}

/** A resolver that answers each call with the next of `answers` (the last repeats), counting its calls. */
function scriptedResolver(answers: string[][]): Resolver & { calls: number } {
  const resolver = Object.assign(
    async () => {
      const answer = answers[Math.min(resolver.calls, answers.length - 1)]!;
      resolver.calls++;
      return answer;
    },
    { calls: 0 },
  );
  return resolver;
}

const request = (resolve: Resolver, more: Partial<PinnedRequest> = {}): PinnedRequest => ({
  method: 'POST',
  headers: {},
  body: '{}',
  timeoutMs: 5000,
  allowPrivate: true,
  resolve,
  ...more,
});

describe('pinnedFetch', () => {
  let certificate: { cert: string; key: string };
  let tls: TlsReceiver;
  let tlsPort: number;
  const plain = new WebhookReceiver();
  const plainPort = new URL(plain.url('/')).port;
  // Answers 500 with a body that never ends, or a redirect to loopback.
  const misbehaving = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req) => {
      if (new URL(req.url).pathname === '/redirect')
        return new Response(null, { status: 302, headers: { location: plain.url('/redirected') } });
      return new Response(
        new ReadableStream({ pull: (controller) => controller.enqueue(new TextEncoder().encode('x'.repeat(65_536))) }),
        { status: 500 },
      );
    },
  });
  beforeAll(async () => {
    certificate = await selfSignedCertificate(MADE_UP_HOST);
    tls = new TlsReceiver(certificate);
    tlsPort = await tls.listen();
  });
  afterAll(() => {
    tls.close();
    plain.stop();
    misbehaving.stop(true);
  });

  test('http: one resolution, the connection to its answer, the name as the Host header', async () => {
    const resolve = scriptedResolver([['127.0.0.1'], ['127.0.0.2']]);
    const answer = await pinnedFetch(`http://${MADE_UP_HOST}:${plainPort}/http-pinned?x=1`, request(resolve));
    expect(answer).toMatchObject({ status: 204, address: '127.0.0.1' });
    expect(resolve.calls).toBe(1);
    expect(plain.on('/http-pinned').map((r) => r.headers.host)).toEqual([`${MADE_UP_HOST}:${plainPort}`]);
  });

  test("a name's next address is tried when one refuses the connection", async () => {
    const resolve = scriptedResolver([['127.0.0.2', '127.0.0.1']]);
    expect(await pinnedFetch(`http://${MADE_UP_HOST}:${plainPort}/next-address`, request(resolve))).toMatchObject({
      status: 204,
      address: '127.0.0.1',
    });
    expect(plain.on('/next-address')).toHaveLength(1);
  });

  test('https: the name is the TLS server name and what the certificate is checked against', async () => {
    const resolve = scriptedResolver([['127.0.0.1']]);
    const answer = await pinnedFetch(
      `https://${MADE_UP_HOST}:${tlsPort}/tls-pinned`,
      request(resolve, { ca: certificate.cert }),
    );
    expect(answer).toMatchObject({ status: 204, address: '127.0.0.1' });
    expect(tls.seen.filter((s) => s.path === '/tls-pinned')).toEqual([
      { serverName: MADE_UP_HOST, host: `${MADE_UP_HOST}:${tlsPort}`, path: '/tls-pinned' },
    ]);
  });

  test('https: a certificate for another name, or from an untrusted issuer, fails', async () => {
    const other = pinnedFetch(
      `https://other.made-up.test:${tlsPort}/wrong-name`,
      request(scriptedResolver([['127.0.0.1']]), { ca: certificate.cert }),
    );
    await expect(other).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    const untrusted = pinnedFetch(
      `https://${MADE_UP_HOST}:${tlsPort}/untrusted`,
      request(scriptedResolver([['127.0.0.1']])),
    );
    await expect(untrusted).rejects.toMatchObject({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    expect(tls.seen.filter((s) => s.path !== '/tls-pinned')).toEqual([]);
  });

  test('a private address is refused before any connection, unless allowed', async () => {
    const resolve = scriptedResolver([['93.184.216.34', '127.0.0.1']]);
    const refused = pinnedFetch(
      `http://${MADE_UP_HOST}:${plainPort}/refused`,
      request(resolve, { allowPrivate: false }),
    );
    await expect(refused).rejects.toBeInstanceOf(DestinationRefused);
    expect(resolve.calls).toBe(1);
    expect(plain.on('/refused')).toHaveLength(0);
  });

  test('an answer is read up to its limit, the rest never; a redirect is answered, not followed', async () => {
    const started = Date.now();
    const endless = await pinnedFetch(
      `http://127.0.0.1:${misbehaving.port}/endless`,
      request(scriptedResolver([]), { maxAnswerBytes: 100_000 }),
    );
    expect(endless).toMatchObject({ status: 500, truncated: true });
    expect(endless.body).toBe('x'.repeat(100_000));
    expect(Date.now() - started).toBeLessThan(2000);
    const redirect = await pinnedFetch(`http://127.0.0.1:${misbehaving.port}/redirect`, request(scriptedResolver([])));
    expect(redirect).toMatchObject({ status: 302, body: '', truncated: false });
    expect(plain.on('/redirected')).toHaveLength(0);
  });
});

/** The endpoint's deliveries, newest first, once `count` of them have had an attempt. */
async function attempted(account: TestAccount, webhookId: string, count: number): Promise<Delivery[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const deliveries = await deliveriesOf(account, webhookId);
    if (deliveries.length >= count && deliveries.every((d) => d.attempts > 0)) return deliveries;
    if (Date.now() > deadline) throw new Error(`the deliveries are ${JSON.stringify(deliveries)}`);
    await Bun.sleep(50);
  }
}

describe('a delivery', () => {
  let service: TestService;
  const receiver = new WebhookReceiver();
  const port = new URL(receiver.url('/')).port;
  // The made-up name answers loopback once, then an address where nothing listens: a second
  // resolution in an attempt would send the request nowhere.
  let resolve = scriptedResolver([['127.0.0.1']]);
  // Answers 500 with a body that never ends.
  const endless = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () =>
      new Response(
        new ReadableStream({ pull: (controller) => controller.enqueue(new TextEncoder().encode('no'.repeat(32_768))) }),
        { status: 500 },
      ),
  });
  beforeAll(async () => {
    service = await startTestService('pglite', {
      env: {
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        WEBHOOKS_RETRY_SECONDS: '60',
        WEBHOOKS_POLL_MS: '100',
        WEBHOOKS_TIMEOUT_SECONDS: '5',
      },
      overrides: { webhookResolver: (host) => resolve(host) },
    });
  });
  afterAll(async () => {
    await service.stop();
    receiver.stop();
    endless.stop(true);
  });

  test('resolves the name once per attempt and connects to that answer, the name as the Host header', async () => {
    const account = await service.account();
    const endpoint = await addWebhook(account, {
      url: `http://${MADE_UP_HOST}:${port}/pinned`,
      events: ['session.ended'],
    });
    resolve = scriptedResolver([['127.0.0.1'], ['127.0.0.2']]);
    await account.call('POST', `/v1/webhooks/${endpoint.webhook_id}/test`);
    expect(await latestDelivery(account, endpoint.webhook_id, 'delivered')).toMatchObject({
      attempts: 1,
      response_status: 204,
    });
    expect(resolve.calls).toBe(1);
    expect(receiver.on('/pinned').map((r) => r.headers.host)).toEqual([`${MADE_UP_HOST}:${port}`]);
    expect(receiver.verified('/pinned', endpoint.secret!).map((e) => e.type)).toEqual(['webhook.test']);

    // The next attempt resolves again, and goes where that answer says: nowhere, here.
    await account.call('POST', `/v1/webhooks/${endpoint.webhook_id}/test`);
    const [second] = await attempted(account, endpoint.webhook_id, 2);
    expect(second).toMatchObject({ status: 'pending', attempts: 1 });
    expect(second!.last_error).toStartWith('could not connect');
    expect(resolve.calls).toBe(2);
    expect(receiver.on('/pinned')).toHaveLength(1);
  });

  test("reads a receiver's error answer only so far: an endless body is cut, not awaited", async () => {
    const account = await service.account();
    const endpoint = await addWebhook(account, {
      url: `http://127.0.0.1:${endless.port}/endless`,
      events: ['session.ended'],
    });
    const started = Date.now();
    await account.call('POST', `/v1/webhooks/${endpoint.webhook_id}/test`);
    const [delivery] = await attempted(account, endpoint.webhook_id, 1);
    expect(delivery!.last_error).toBe(`answered 500: ${'no'.repeat(100)}`);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  test('over https, to a certificate for the made-up name trusted by the sender alone', async () => {
    const certificate = await selfSignedCertificate(MADE_UP_HOST);
    const tls = new TlsReceiver(certificate);
    const tlsPort = await tls.listen();
    // This service's own sender trusts only the public CAs: the test sends with one that trusts this certificate.
    await service.services.webhooks.stop();
    const sender = new WebhookSender({
      db: service.services.database.db,
      settings: service.config.webhooks,
      resolve: async () => ['127.0.0.1'],
      ca: certificate.cert,
    });
    try {
      const account = await service.account();
      const endpoint = await addWebhook(account, {
        url: `https://${MADE_UP_HOST}:${tlsPort}/tls`,
        events: ['session.ended'],
      });
      await account.call('POST', `/v1/webhooks/${endpoint.webhook_id}/test`);
      expect(await sender.sendDue()).toBe(1);
      expect(await latestDelivery(account, endpoint.webhook_id, 'delivered')).toMatchObject({
        attempts: 1,
        response_status: 204,
      });
      expect(tls.seen).toEqual([{ serverName: MADE_UP_HOST, host: `${MADE_UP_HOST}:${tlsPort}`, path: '/tls' }]);
    } finally {
      tls.close();
    }
  });
});
