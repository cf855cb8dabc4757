// Calling a URL a customer gave (webhooks now; webhook-type tools next): the host is resolved
// and judged once (destinations.ts), then the request goes to the judged address itself, so a
// name that rebinds between the check and the connection changes nothing. The URL's name still
// travels as the Host header and, for https, as the TLS server name, which is also the name the
// certificate must carry. No redirects (they could lead anywhere), a deadline, and only the first
// bytes of the answer are read.
import ipaddr from 'ipaddr.js';
import { bareHost, type Resolver, resolveDestination } from './destinations.ts';

/** What is read of an answer's body unless the caller says otherwise. */
export const ANSWER_BYTES = 64 * 1024;

export interface PinnedRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** For the whole exchange: connecting, sending and reading the answer. */
  timeoutMs: number;
  /** Skip the public-address rule (WEBHOOKS_ALLOW_PRIVATE); the address is pinned all the same. */
  allowPrivate: boolean;
  resolve: Resolver;
  /** Bytes of the answer's body read; the rest is never downloaded. */
  maxAnswerBytes?: number;
  /** Leave a 2xx answer's body unread: its status is all the caller wants, and a slow body cannot undo it. */
  skipOkBody?: boolean;
  /** Certificates trusted instead of the public CAs: for tests serving a certificate of their own. */
  ca?: string;
}

export interface PinnedAnswer {
  status: number;
  ok: boolean;
  headers: Headers;
  /** The body's first `maxAnswerBytes` bytes, as UTF-8 ('' if skipped). */
  body: string;
  /** The body is incomplete: it went on past what was read, or broke off. */
  truncated: boolean;
  /** The address connected to. */
  address: string;
}

/** Connection failures where nothing was sent: the next address may be tried. */
const UNREACHED = new Set(['ECONNREFUSED', 'ENETUNREACH', 'EHOSTUNREACH', 'ConnectionRefused']);

/**
 * One request to `url` through the address its host resolves to now. Throws DestinationRefused
 * (destinations.ts) for a destination that may not be called, and fetch's own errors (a
 * TimeoutError past the deadline) for one that could not be reached.
 */
export async function pinnedFetch(url: string, request: PinnedRequest): Promise<PinnedAnswer> {
  const { url: target, addresses } = await resolveDestination(url, request);
  const headers = new Headers(request.headers);
  headers.set('host', target.host);
  const init = {
    method: request.method,
    redirect: 'manual',
    signal: AbortSignal.timeout(request.timeoutMs),
    headers,
    body: request.body,
    tls: target.protocol === 'https:' ? tlsFor(target, request.ca) : undefined,
  } satisfies BunFetchRequestInit;
  // A name's next address is tried only when one refused the connection, before anything was sent.
  for (const [index, address] of addresses.entries()) {
    let response: Response;
    try {
      response = await fetch(addressed(target, address), init);
    } catch (error) {
      if (index < addresses.length - 1 && UNREACHED.has((error as { code?: string }).code ?? '')) continue;
      throw error;
    }
    const { text, truncated } =
      request.skipOkBody && response.ok
        ? await discard(response)
        : await readAtMost(response, request.maxAnswerBytes ?? ANSWER_BYTES);
    return { status: response.status, ok: response.ok, headers: response.headers, body: text, truncated, address };
  }
  throw new Error('resolveDestination returned no address');
}

/** `url` with its host replaced by `address` (bracketed if IPv6). */
function addressed(url: URL, address: string): URL {
  const pinned = new URL(url);
  pinned.hostname = ipaddr.parse(address).kind() === 'ipv6' ? `[${address}]` : address;
  return pinned;
}

/** The certificate is checked against the URL's name, sent as SNI; an IP literal is checked as itself. */
function tlsFor(url: URL, ca: string | undefined) {
  const host = bareHost(url);
  return { ...(ipaddr.isValid(host) ? {} : { serverName: host }), ...(ca ? { ca } : {}) };
}

async function discard(response: Response): Promise<{ text: string; truncated: boolean }> {
  await response.body?.cancel().catch(() => undefined);
  return { text: '', truncated: response.body !== null };
}

/**
 * Reads the body up to `limit` bytes and cancels the rest, so a receiver cannot make this process
 * buffer a huge answer. A body that breaks off (or outlasts the deadline) is what arrived of it.
 */
async function readAtMost(response: Response, limit: number): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let complete = false;
  try {
    // One byte past the limit tells a body that goes on from one that ends there.
    while (size <= limit) {
      const { done, value } = await reader.read();
      if (done) {
        complete = true;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // Broke off: keep what arrived.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks).subarray(0, limit)), truncated: !complete };
}
