// Ports for the local LiveKit server: one TCP port for signalling and the API, and a run of
// UDP ports for WebRTC media, all on loopback and free when picked.
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

const RTC_PORT_SPAN = { min: 40_000, max: 59_999 };

/** Ports this process handed out: Linux often gives the same free port to successive asks. */
const handedOut = new Set<number>();

export async function freeTcpPort(host: string): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await someFreeTcpPort(host);
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`found no free TCP port on ${host}`);
}

function someFreeTcpPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

function udpPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', () => {
      socket.close();
      resolve(false);
    });
    socket.bind(port, host, () => socket.close(() => resolve(true)));
  });
}

/** A random run of `count` consecutive UDP ports that are free right now. */
export async function freeUdpRange(host: string, count: number): Promise<{ start: number; end: number }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const start = RTC_PORT_SPAN.min + Math.floor(Math.random() * (RTC_PORT_SPAN.max - RTC_PORT_SPAN.min - count));
    const ports = Array.from({ length: count }, (_, i) => start + i);
    const free = await Promise.all(ports.map((port) => udpPortFree(host, port)));
    if (free.every(Boolean)) return { start, end: start + count - 1 };
  }
  throw new Error(`found no ${count} consecutive free UDP ports on ${host}`);
}
