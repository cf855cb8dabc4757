// Credentials before bodies on the internal routes and the console's open ones (issue 28): a
// 35 MiB POST is answered before its first megabyte has gone. Sent over a raw socket, so the
// test knows exactly what left: the headers, 64 KiB of the body, then nothing until the answer.
// Without credentials: 401. With them, a body over the route's own bound: 413, still unread.
// A body of undeclared length: 411. With everything right, the route works as before.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { AccessToken } from 'livekit-server-sdk';
import { HEARTBEAT_PATH } from '../../src/contract/index.ts';
import { startTestService, type TestService } from '../support/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService('pglite');
});
afterAll(() => service.stop());

const MiB = 1024 * 1024;
const SENT_BODY = 64 * 1024;

interface RawAnswer {
  status: number;
  body: string;
  /** Body bytes that had left when the answer came. */
  bodySent: number;
}

/**
 * A POST whose headers promise `length` bytes (or chunks, with `length` null); 64 KiB of the
 * body follow, then the sender waits up to 5 s for an answer before sending more.
 */
async function rawPost(
  path: string,
  headers: Record<string, string>,
  length: number | null = 35 * MiB,
): Promise<RawAnswer> {
  const { hostname, port } = new URL(service.url);
  let received = '';
  let answered!: () => void;
  const answer = new Promise<void>((resolve) => (answered = resolve));
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_socket, data) {
        received += data.toString('latin1');
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return;
        const declared = Number(/content-length: (\d+)/i.exec(received.slice(0, end))?.[1] ?? 0);
        if (received.length >= end + 4 + declared) answered();
      },
      close: () => answered(),
    },
  });
  const head = [
    `POST ${path} HTTP/1.1`,
    `host: ${hostname}:${port}`,
    'content-type: application/json',
    length === null ? 'transfer-encoding: chunked' : `content-length: ${length}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ].join('\r\n');
  socket.write(`${head}\r\n\r\n`);
  let bodySent = 0;
  const chunk = Buffer.alloc(SENT_BODY, 0x20);
  if (length === null) socket.write(`${chunk.length.toString(16)}\r\n`);
  while (bodySent < chunk.length) bodySent += socket.write(chunk.subarray(bodySent));
  await Promise.race([answer, Bun.sleep(5_000)]);
  socket.end();
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
  return { status, body: received.slice(received.indexOf('\r\n\r\n') + 4), bodySent };
}

async function workerToken(secret: string, worker: string): Promise<string> {
  const token = new AccessToken(service.services.livekit.apiKey, secret, { identity: worker });
  return token.toJwt();
}

describe('internal routes: credentials before bodies', () => {
  test('a 35 MiB POST without credentials, or with wrong ones, is answered 401 with 64 KiB of it sent', async () => {
    const forged = await workerToken('another-secret-another-secret-another', 'wkr_x');
    for (const [path, headers] of [
      ['/internal/livekit/webhook', {}],
      ['/internal/livekit/webhook', { authorization: forged }],
      ['/internal/sessions/ses_nosuchsession/reports', {}],
      ['/internal/sessions/ses_nosuchsession/reports', { authorization: 'Bearer wrong-report-token' }],
      ['/internal/sessions/ses_%00x/reports', { authorization: 'Bearer wrong-report-token' }],
      [HEARTBEAT_PATH, {}],
      [HEARTBEAT_PATH, { authorization: `Bearer ${forged}` }],
      ['/internal/admin/accounts', {}],
      ['/internal/admin/accounts', { authorization: 'Bearer wrong-admin-token' }],
    ] as const) {
      const answer = await rawPost(path, headers);
      expect({ path, status: answer.status, sent: answer.bodySent }).toEqual({ path, status: 401, sent: SENT_BODY });
      expect(typeof (JSON.parse(answer.body) as { detail: unknown }).detail).toBe('string');
    }
  }, 60_000);

  test("with credentials, a body over the route's bound is 413 unread, and one of undeclared length 411", async () => {
    const heartbeat = { authorization: `Bearer ${await workerToken(service.services.livekit.apiSecret, 'wkr_test')}` };
    const admin = { authorization: `Bearer ${service.services.adminToken}` };
    for (const [path, headers] of [
      [HEARTBEAT_PATH, heartbeat],
      ['/internal/admin/accounts', admin],
    ] as const) {
      const oversized = await rawPost(path, headers);
      expect({ path, status: oversized.status, sent: oversized.bodySent }).toEqual({
        path,
        status: 413,
        sent: SENT_BODY,
      });
      const chunked = await rawPost(path, headers, null);
      expect({ path, status: chunked.status }).toEqual({ path, status: 411 });
    }
  }, 60_000);

  test('with credentials and a small body the routes work as before', async () => {
    const token = await workerToken(service.services.livekit.apiSecret, 'wkr_test');
    /** An idle worker's heartbeat, reported as `workerId` with wkr_test's token. */
    const heartbeatAs = (workerId: string) =>
      fetch(`${service.url}${HEARTBEAT_PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          worker_id: workerId,
          agent_name: service.config.livekit.agentName,
          capacity: 3,
          sessions: [],
          draining: false,
        }),
      });
    const beat = await heartbeatAs('wkr_test');
    expect(beat.status).toBe(200);
    // A token for one worker cannot report for another.
    const other = await heartbeatAs('wkr_other');
    expect(other.status).toBe(401);
    const created = await fetch(`${service.url}/internal/admin/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.services.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `internal-${crypto.randomUUID().slice(0, 8)}@example.com` }),
    });
    expect(created.status).toBe(200);
  });
});

describe("the console's routes open to anyone", () => {
  test('sign-in and sign-up read at most 16 KiB: a 35 MiB body is 413 unread, one of undeclared length 411', async () => {
    for (const path of ['/console/api/sign-in', '/console/api/sign-up']) {
      const oversized = await rawPost(path, {});
      expect({ path, status: oversized.status, sent: oversized.bodySent }).toEqual({
        path,
        status: 413,
        sent: SENT_BODY,
      });
      const chunked = await rawPost(path, {}, null);
      expect({ path, status: chunked.status }).toEqual({ path, status: 411 });
    }
  }, 60_000);
});
