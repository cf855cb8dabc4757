// Issue 41 point 5: what a customer's receiver answers (a webhook's error answer, a tool's
// result) is bounded after decompression. Before, Bun's fetch inflated a compressed answer ahead
// of the reader and on after it stopped: a 1 MB gzip of 1 GB of zeros made the process allocate
// up to ~300 MB per answer, a 400 KB brotli of 2 GB of zeros most of it. The bombs here are served from loopback; the
// peak is the process's resident high-water mark (/proc/self/status VmHWM, reset before each).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Transform } from 'node:stream';
import { brotliCompressSync, constants, createBrotliCompress, createGzip, deflateSync, gzipSync } from 'node:zlib';
import type { ToolCallAnswer } from '../../src/contract/agent-tools.ts';
import { type PinnedRequest, pinnedFetch } from '../../src/webhooks/pinned-fetch.ts';
import { runningJobSession } from '../support/job-session.ts';
import { ENGINES, startTestService, type TestService } from '../support/service.ts';
import { addWebhook, type Delivery, deliveriesOf, json } from '../support/webhooks.ts';

const MB = 1024 * 1024;
/** What one bomb may add to the process's peak; the old code added 150–350 MB (up to 900 in the service). */
const PEAK_GROWTH_MAX_MB = 64;
/** The same with the whole service in this process, whose own allocations make up to ~60 MB of noise. */
const SERVICE_PEAK_GROWTH_MAX_MB = 128;
const REPLACEMENT = '\uFFFD';

/** `mb` MB of zeros through `compressor`, fed 1 MB at a time (never held whole). */
async function squeeze(compressor: Transform, mb: number): Promise<Uint8Array<ArrayBuffer>> {
  const out: Buffer[] = [];
  compressor.on('data', (chunk: Buffer) => out.push(chunk));
  const zeros = Buffer.alloc(MB);
  for (let i = 0; i < mb; i++)
    if (!compressor.write(zeros)) await new Promise((resolve) => compressor.once('drain', resolve));
  await new Promise((resolve) => compressor.end(resolve));
  return new Uint8Array(Buffer.concat(out));
}

const statusLine = (field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

/** How far above the resident size before `work` its peak went, in MB. */
async function peakGrowth(work: () => Promise<void>): Promise<number> {
  writeFileSync('/proc/self/clear_refs', '5'); // resets VmHWM to the current size
  const before = statusLine('VmRSS');
  await work();
  return statusLine('VmHWM') - before;
}

const ANSWER = JSON.stringify({ opens: '09:30', closes: '18:00' });
const bombs: Record<string, Uint8Array<ArrayBuffer>> = {};

// A receiver whose path says what it answers: /<coding>-bomb/<status>, or a small answer.
const receiver = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: async (request) => {
    await request.arrayBuffer();
    const [, kind, status] = new URL(request.url).pathname.split('/');
    const answer = (body: BodyInit, encoding: string) =>
      new Response(body, { status: Number(status ?? 200), headers: { 'content-encoding': encoding } });
    if (kind === 'gzip-bomb') return answer(bombs.gzip!, 'gzip');
    if (kind === 'br-bomb') return answer(bombs.br!, 'br');
    if (kind === 'gzip') return answer(gzipSync(ANSWER), 'gzip');
    if (kind === 'deflate') return answer(deflateSync(ANSWER), 'deflate');
    // Coded gzip first, then br.
    if (kind === 'stacked') return answer(brotliCompressSync(gzipSync(ANSWER)), 'gzip, br');
    if (kind === 'unasked') return answer(ANSWER, 'zstd');
    if (kind === 'corrupt')
      return answer(Buffer.concat([gzipSync(ANSWER).subarray(0, 20), Buffer.alloc(64, 7)]), 'gzip');
    return new Response('no such answer', { status: 404 });
  },
});
const at = (path: string) => `http://127.0.0.1:${receiver.port}${path}`;

beforeAll(async () => {
  bombs.gzip = await squeeze(createGzip({ level: 6 }), 1024);
  // Larger: what an earlier bomb left mapped in this process must not hide the next one.
  bombs.br = await squeeze(createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 1 } }), 2048);
});
afterAll(() => receiver.stop(true));

describe('pinnedFetch of a compressed answer', () => {
  const request = (maxAnswerBytes?: number): PinnedRequest => ({
    method: 'POST',
    headers: {},
    body: '{}',
    timeoutMs: 5000,
    allowPrivate: true,
    resolve: async () => [],
    maxAnswerBytes,
  });

  test.each(['gzip', 'br'])(
    'a %s bomb (GBs of zeros) is read up to the limit, quickly, in bounded memory',
    async (coding) => {
      for (const status of [500, 200]) {
        let answer: Awaited<ReturnType<typeof pinnedFetch>> | undefined;
        const started = Date.now();
        const growth = await peakGrowth(async () => {
          answer = await pinnedFetch(at(`/${coding}-bomb/${status}`), request(64 * 1024));
          await Bun.sleep(300); // anything still inflating behind the reader would show here
        });
        expect(answer).toMatchObject({ status, truncated: true });
        expect(answer!.body).toBe('\u0000'.repeat(64 * 1024));
        expect(Date.now() - started).toBeLessThan(2000);
        expect(growth).toBeLessThan(PEAK_GROWTH_MAX_MB);
      }
    },
  );

  test('gzip, deflate, br and stacked codings are decoded; a coding not asked for is read as it came', async () => {
    for (const kind of ['gzip', 'deflate', 'stacked', 'unasked'])
      expect(await pinnedFetch(at(`/${kind}`), request()), kind).toMatchObject({ body: ANSWER, truncated: false });
  });

  test('a body that stops decoding is what decoded of it, marked incomplete', async () => {
    expect(await pinnedFetch(at('/corrupt'), request())).toMatchObject({ status: 200, truncated: true });
  });
});

describe.each(ENGINES)('compressed answers to the service on %s', (engine) => {
  let service: TestService;
  beforeAll(async () => {
    // The receiver is on loopback.
    service = await startTestService(engine, {
      env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_RETRY_SECONDS: '60', WEBHOOKS_POLL_MS: '100' },
    });
  });
  afterAll(() => service?.stop());

  test("a webhook receiver's brotli bomb: the attempt is recorded with the answer's start, quickly, in bounded memory", async () => {
    const account = await service.account();
    const endpoint = await addWebhook(account, { url: at('/br-bomb/500'), events: ['session.ended'] });
    let delivery: Delivery | undefined;
    const started = Date.now();
    const growth = await peakGrowth(async () => {
      await account.call('POST', `/v1/webhooks/${endpoint.webhook_id}/test`);
      while (!delivery?.attempts && Date.now() - started < 10_000) {
        await Bun.sleep(50);
        [delivery] = await deliveriesOf(account, endpoint.webhook_id);
      }
    });
    // The zeros are kept as U+FFFD: Postgres stores no U+0000.
    expect(delivery).toMatchObject({ attempts: 1, last_error: `answered 500: ${REPLACEMENT.repeat(200)}` });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(growth).toBeLessThan(SERVICE_PEAK_GROWTH_MAX_MB);
  });

  test("a tool's brotli bomb: the result is its first 64 KB, cut, quickly, in bounded memory", async () => {
    const account = await service.account();
    const made = await account.call(
      'POST',
      '/v1/tools',
      json({ name: 'bomb', type: 'webhook', description: 'd', url: at('/br-bomb/200'), timeout_ms: 5000 }),
    );
    const { tool_id } = (await made.json()) as { tool_id: string };
    const { id, token } = await runningJobSession(service, account.accountId, { toolIds: [tool_id] });
    const call = async () => {
      const response = await fetch(`${service.url}/internal/sessions/${id}/tool-calls`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ call_id: 'call_bomb', tool_id, arguments: {} }),
      });
      return (await response.json()) as ToolCallAnswer;
    };
    let called: ToolCallAnswer | undefined;
    const started = Date.now();
    const growth = await peakGrowth(async () => {
      called = await call();
      await Bun.sleep(300);
    });
    expect(called!.outcome).toBe('ok');
    expect(called!.result).toBe(
      `${REPLACEMENT.repeat(64 * 1024)}\n[the answer was cut: only its first ${64 * 1024} bytes were read]`,
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(growth).toBeLessThan(SERVICE_PEAK_GROWTH_MAX_MB);
  });
});
