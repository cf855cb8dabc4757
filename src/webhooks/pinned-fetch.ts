// Calling a URL a customer gave (webhooks now; webhook-type tools next): the host is resolved
// and judged once (destinations.ts), then the request goes to the judged address itself, so a
// name that rebinds between the check and the connection changes nothing. The URL's name still
// travels as the Host header and, for https, as the TLS server name, which is also the name the
// certificate must carry. No redirects (they could lead anywhere), a deadline, and only the first
// bytes of the answer are read, counted after decompression.
import { pipeline, Readable, type Transform } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
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

/**
 * The content codings asked for, decoded here: fetch's own decoding inflates what arrives ahead
 * of the reader, with no bound (a few hundred KB of brotli made it allocate GBs). zlib's streams
 * inflate only as far as they are read.
 */
const DECODERS = new Map<string, () => Transform>([
  ['gzip', createGunzip],
  ['x-gzip', createGunzip],
  ['deflate', createInflate],
  ['br', createBrotliDecompress],
]);
const ACCEPT_ENCODING = 'gzip, deflate, br';
/** Codings stacked on one answer beyond this are not decoded (each costs a decoder's memory). */
const CODINGS_MAX = 2;

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
  headers.set('accept-encoding', ACCEPT_ENCODING);
  const init = {
    method: request.method,
    redirect: 'manual',
    decompress: false,
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

/** The decoders for `content-encoding`, last applied first; none for identity, or for codings not asked for (read as they are). */
function decodersFor(contentEncoding: string | null): Transform[] {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length > CODINGS_MAX || !codings.every((coding) => DECODERS.has(coding))) return [];
  return codings.reverse().map((coding) => DECODERS.get(coding)!());
}

/**
 * Reads the body, decoded, up to `limit` bytes and cancels the rest, so a receiver cannot make
 * this process buffer a huge answer, nor inflate a small one into a huge one. A body that breaks
 * off, fails to decode or outlasts the deadline is what arrived of it.
 */
async function readAtMost(response: Response, limit: number): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const source = Readable.fromWeb(response.body as unknown as NodeReadableStream<Uint8Array>);
  const decoders = decodersFor(response.headers.get('content-encoding'));
  // pipeline: an error anywhere (the body broke off, bad gzip) ends the last stream with it.
  if (decoders.length > 0) pipeline([source, ...decoders], () => undefined);
  const decoded: Readable = decoders.at(-1) ?? source;
  const chunks: Uint8Array[] = [];
  let size = 0;
  let complete = false;
  try {
    // One byte past the limit tells a body that goes on from one that ends there.
    for await (const chunk of decoded) {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size > limit) break;
    }
    complete = size <= limit;
  } catch {
    // Broke off: keep what arrived.
  } finally {
    decoded.destroy();
    source.destroy();
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks).subarray(0, limit)), truncated: !complete };
}
