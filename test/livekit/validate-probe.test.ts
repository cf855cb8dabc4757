// The `/rtc/validate` probe passed on to LiveKit (src/livekit/signal-proxy.ts): a client asks it
// only when its join failed, so a connection that dies under the probe is tried once more rather
// than answered with a 502 of ours. The upstream here is a raw socket server that drops the
// first connection without a word and answers the second like LiveKit.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { TCPSocketListener } from 'bun';
import { SignalTunnels, signalProxy } from '../../src/livekit/signal-proxy.ts';

describe('the validate probe through the signal proxy', () => {
  let upstream: TCPSocketListener<undefined>;
  let connections = 0;
  let dropNext = 0;
  const seen: string[] = [];

  beforeAll(() => {
    upstream = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        open() {
          connections++;
        },
        data(socket, data) {
          const head = data.toString('latin1');
          seen.push(head.split('\r\n')[0] ?? '');
          if (dropNext > 0) {
            dropNext--;
            socket.terminate();
            return;
          }
          const body = head.includes('access_token=good') ? 'success' : 'invalid token';
          const status = head.includes('access_token=good') ? '200 OK' : '401 Unauthorized';
          socket.end(`HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
        },
      },
    });
  });
  afterAll(() => upstream?.stop(true));

  const ask = (token: string) =>
    signalProxy(`ws://127.0.0.1:${upstream.port}`, new SignalTunnels()).handle(
      new Request(`http://likeness.test/rtc/validate?access_token=${token}`),
    );

  test("LiveKit's answer passes through, status and body", async () => {
    const good = await ask('good');
    expect(good.status).toBe(200);
    expect(await good.text()).toBe('success');
    const bad = await ask('bad');
    expect(bad.status).toBe(401);
    expect(await bad.text()).toBe('invalid token');
  });

  test('a connection dropped under the probe is tried once more on a new one', async () => {
    const before = connections;
    dropNext = 1;
    const answer = await ask('good');
    expect(answer.status).toBe(200);
    expect(connections - before).toBe(2);
    expect(seen.at(-1)).toStartWith('GET /rtc/validate?access_token=good');
  });

  test('twice dropped is a 502 that says LiveKit did not answer', async () => {
    dropNext = 2;
    const answer = await ask('good');
    expect(answer.status).toBe(502);
    expect(await answer.text()).toBe('LiveKit did not answer');
    dropNext = 0;
  });
});
