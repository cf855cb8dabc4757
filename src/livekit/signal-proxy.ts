// LiveKit's signalling through this service's own port and origin (docs/api.md#in-room): a
// client given `rtc_url` = PUBLIC_URL as ws(s) connects to `<rtc_url>/rtc…`, and this passes
// the WebSocket (and the `/rtc…/validate` probe a client makes when a connection fails) on to
// the LiveKit server. So the local server's signalling needs no port of its own, TLS ends
// once, wherever it ends for the API, and an https console gets wss without mixed content.
// Media do not come this way: they go to the node's UDP ports (or ICE over TCP).
import type { ServerWebSocket } from 'bun';
import { Elysia } from 'elysia';
import { secureListenerOf } from '../http/listeners.ts';
import { log } from '../logging/index.ts';
import { httpUrlOf } from './connection.ts';

// Bun hands a binary frame over as a Buffer on an ArrayBuffer of its own, never a shared one.
type Message = string | ArrayBuffer | Uint8Array<ArrayBuffer>;

/**
 * The signalling connections open through one service. Its stop closes them first: Bun's
 * graceful stop waits for every open WebSocket, and a visitor's lasts the whole session.
 */
export class SignalTunnels {
  readonly #open = new Set<Tunnel>();

  opened(tunnel: Tunnel) {
    this.#open.add(tunnel);
  }

  closed(tunnel: Tunnel) {
    this.#open.delete(tunnel);
  }

  get size(): number {
    return this.#open.size;
  }

  /** Each client is told to go elsewhere (1001, going away): LiveKit's clients then reconnect, to another API process behind the same address. */
  closeAll() {
    for (const tunnel of [...this.#open]) tunnel.goAway();
  }
}

/**
 * One client's signalling connection and its twin to LiveKit. Elysia's Bun adapter calls
 * `open`, `message` and `close` of an upgraded socket's data (that is how its own .ws routes
 * work), so the tunnel rides in the upgrade's data.
 */
class Tunnel {
  #upstream: WebSocket | undefined;
  #client: ServerWebSocket<unknown> | undefined;
  /** What the client sent before LiveKit answered the connection. */
  #pending: Message[] = [];
  #closed = false;

  constructor(
    private readonly target: string,
    private readonly headers: Record<string, string>,
    private readonly tunnels: SignalTunnels,
  ) {}

  open(client: ServerWebSocket<unknown>) {
    this.#client = client;
    this.tunnels.opened(this);
    // Bun's WebSocket takes headers: the Rust SDK (rtc-node) sends its token in Authorization.
    const upstream = new WebSocket(this.target, { headers: this.headers } as unknown as string[]);
    upstream.binaryType = 'arraybuffer';
    this.#upstream = upstream;
    upstream.onopen = () => {
      for (const message of this.#pending.splice(0)) upstream.send(message);
    };
    upstream.onmessage = (event) => void client.send(event.data as string | ArrayBuffer);
    upstream.onclose = (event) => this.#end(client, event.code, event.reason);
    upstream.onerror = () => this.#end(client, 1011, 'LiveKit signalling unreachable');
  }

  message(_client: ServerWebSocket<unknown>, message: Message) {
    const upstream = this.#upstream;
    if (upstream?.readyState === WebSocket.OPEN) upstream.send(message);
    else if (upstream?.readyState === WebSocket.CONNECTING) this.#pending.push(message);
  }

  close() {
    this.#closed = true;
    this.tunnels.closed(this);
    this.#pending = [];
    this.#upstream?.close();
  }

  goAway() {
    const client = this.#client;
    this.close();
    client?.close(1001, 'the service is stopping');
  }

  #end(client: ServerWebSocket<unknown>, code: number, reason: string) {
    if (this.#closed) return;
    this.#closed = true;
    this.tunnels.closed(this);
    // Codes a peer may not send (no status, abnormal closure, TLS failure) become a plain close.
    client.close([1005, 1006, 1015].includes(code) ? 1000 : code, reason);
  }
}

/**
 * A GET of LiveKit's validate probe, on a connection of its own (Bun's fetch can hand out a
 * pooled keep-alive socket that is dead and then waits out the timeout: oven-sh/bun#31894), and
 * tried once more if the first attempt fails: the probe is idempotent and a client asks it only
 * when its join failed, so it should not fail too for a reason of ours.
 */
async function probe(url: string, headers: Record<string, string>): Promise<Response | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, { headers, keepalive: false, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    } catch (error) {
      log.warn({ err: error, attempt }, 'the LiveKit server did not answer the validate probe');
      if (attempt === 2) return undefined;
    }
  }
}

const PROBE_TIMEOUT_MS = 5_000;

/** The `/rtc…` routes, passed on to the LiveKit server at `livekitUrl` (ws(s) or http(s)). */
export function signalProxy(livekitUrl: string, tunnels: SignalTunnels) {
  const httpBase = httpUrlOf(livekitUrl).replace(/\/+$/, '');
  const wsBase = httpBase.replace(/^http/, 'ws');
  const pass = async ({
    request,
    server,
  }: {
    request: Request;
    server: { upgrade(request: Request, options: { data: unknown }): boolean } | null;
  }) => {
    const url = new URL(request.url);
    const path = `${url.pathname}${url.search}`;
    // Clients send the room token in the query (browsers) or in Authorization (the Rust SDK).
    const authorization = request.headers.get('authorization');
    const headers: Record<string, string> = authorization ? { authorization } : {};
    if (request.headers.get('upgrade')?.toLowerCase() === 'websocket') {
      // Upgraded by the listener it came in on: Elysia's server is the plain one.
      const listener = secureListenerOf(request) ?? server;
      if (listener?.upgrade(request, { data: new Tunnel(`${wsBase}${path}`, headers, tunnels) })) return;
      return new Response('Expected a WebSocket connection', { status: 400 });
    }
    // The validate probe: LiveKit says why a join failed (a bad token, say).
    const answer = await probe(`${httpBase}${path}`, headers);
    if (!answer) return new Response('LiveKit did not answer', { status: 502 });
    return new Response(await answer.arrayBuffer(), {
      status: answer.status,
      headers: { 'content-type': answer.headers.get('content-type') ?? 'text/plain' },
    });
  };
  return new Elysia({ name: 'likeness/rtc-proxy', detail: { hide: true } }).get('/rtc', pass).get('/rtc/*', pass);
}
