// Where a webhook may be sent: http(s) URLs whose host resolves only to public addresses, so a
// customer cannot point the service at its own network (metadata services, databases, admin
// ports). Checked when an endpoint is saved and again before every delivery, since a name can
// resolve elsewhere later (DNS rebinding); the delivery then connects to the very address it
// judged (pinned-fetch.ts), so the name is resolved once per attempt. WEBHOOKS_ALLOW_PRIVATE
// lifts the address rule.
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** A host's addresses; injectable so tests can play a name that changes what it points at. */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The destination is refused; the message says why, for the customer. */
export class DestinationRefused extends Error {}

/** A URL judged fit to call, with the addresses its host resolved to (in the resolver's order): connect to these, not to the name. */
export interface CheckedDestination {
  url: URL;
  addresses: string[];
}

type IPv6Prefix = [ipaddr.IPv6, number];
const prefix = (cidr: string) => ipaddr.IPv6.parseCIDR(cidr) as IPv6Prefix;

/**
 * IPv6 forms that carry an IPv4 address: where it sits among the 16 bytes, and whether the form
 * can lead to a public host at all. Without this, `::127.0.0.1` passes as plain unicast.
 */
const IPV4_CARRIERS: { prefix: IPv6Prefix; carried: (bytes: number[]) => number[][]; reachesPublicHosts: boolean }[] = [
  // IPv4-mapped: a dual-stack socket connects to the IPv4 address itself.
  { prefix: prefix('::ffff:0:0/96'), carried: (b) => [b.slice(12)], reachesPublicHosts: true },
  // NAT64's well-known prefix (RFC 6052): a translator connects to the IPv4 address; DNS64
  // answers with these on IPv6-only hosts, so public ones must pass.
  { prefix: prefix('64:ff9b::/96'), carried: (b) => [b.slice(12)], reachesPublicHosts: true },
  // NAT64's local-use prefix (RFC 8215): not globally reachable, and where the IPv4 address sits
  // depends on the local translator's prefix length, so it cannot be judged: refused. Read here
  // as a /96 translator would place it.
  { prefix: prefix('64:ff9b:1::/48'), carried: (b) => [b.slice(12)], reachesPublicHosts: false },
  // 6to4 (RFC 3056): reached through the 6to4 router at the IPv4 address.
  { prefix: prefix('2002::/16'), carried: (b) => [b.slice(2, 6)], reachesPublicHosts: true },
  // Teredo (RFC 4380): the server's IPv4 address, and the client's, stored inverted.
  {
    prefix: prefix('2001::/32'),
    carried: (b) => [b.slice(4, 8), b.slice(12).map((byte) => byte ^ 0xff)],
    reachesPublicHosts: true,
  },
  // IPv4-compatible (deprecated by RFC 4291; `::` and `::1` are in it): routed nowhere public,
  // and a host that still honours it tunnels to the IPv4 address; refused.
  { prefix: prefix('::/96'), carried: (b) => [b.slice(12)], reachesPublicHosts: false },
];

/** The IPv4 addresses an IPv6 address carries, and whether its form can reach a public host; undefined if it carries none. */
export function ipv4Inside(ip: ipaddr.IPv6): { addresses: ipaddr.IPv4[]; reachesPublicHosts: boolean } | undefined {
  const carrier = IPV4_CARRIERS.find((c) => ip.match(c.prefix));
  if (!carrier) return undefined;
  return {
    addresses: carrier.carried(ip.toByteArray()).map((bytes) => new ipaddr.IPv4(bytes)),
    reachesPublicHosts: carrier.reachesPublicHosts,
  };
}

/** Global unicast IPv6 is allocated from 2000::/3 only; outside it (bar the forms above) nothing public answers. */
const GLOBAL_UNICAST = prefix('2000::/3');

/**
 * An address as the system reads it, an IPv4-mapped one as its IPv4 address. ipaddr.js alone
 * reads `::1.2.3.4` as IPv4-mapped, but it is IPv4-compatible (`::102:304`, as URLs write it,
 * and as glibc prints that form): the URL parser reads it exactly.
 */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 {
  let ip = ipaddr.parse(
    text.includes(':') && text.includes('.') ? new URL(`http://[${text}]/`).hostname.slice(1, -1) : text,
  );
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip;
}

/** True for globally routable unicast addresses; an IPv6 form carrying IPv4 addresses is judged by them. */
export function isPublicAddress(address: string): boolean {
  const ip = parseAddress(address);
  if (ip.kind() === 'ipv4') return ip.range() === 'unicast';
  const v6 = ip as ipaddr.IPv6;
  const inside = ipv4Inside(v6);
  if (inside) return inside.reachesPublicHosts && inside.addresses.every((v4) => v4.range() === 'unicast');
  return v6.range() === 'unicast' && v6.match(GLOBAL_UNICAST);
}

function parseDestination(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DestinationRefused('not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new DestinationRefused('only http and https URLs can receive webhooks');
  return parsed;
}

/** The URL's host without IPv6 brackets. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Resolves the host of `url` once (an IP literal is its own address) and, unless `allowPrivate`,
 * throws DestinationRefused if any address is not public. A caller connects to the addresses
 * returned, so what was judged is what is called.
 */
export async function resolveDestination(
  url: string,
  { allowPrivate, resolve }: { allowPrivate: boolean; resolve: Resolver },
): Promise<CheckedDestination> {
  const parsed = parseDestination(url);
  const host = bareHost(parsed);
  const isLiteral = ipaddr.isValid(host);
  const addresses = isLiteral ? [host] : await resolve(host).catch((): string[] => []);
  if (allowPrivate) {
    if (addresses.length === 0) throw new DestinationRefused(`${host} does not resolve`);
  } else if (addresses.length === 0 || !addresses.every(isPublicAddress)) {
    // One message for a name, whatever it resolved to and whether it resolved at all: either
    // would let a customer map the service's own network through its DNS.
    throw new DestinationRefused(
      isLiteral
        ? `${host} is not a public address (private, loopback, link-local or reserved)`
        : `${host} does not resolve to a public address (a name must resolve only to public ones: not private, loopback, link-local or reserved)`,
    );
  }
  // Connected to as judged: an IPv4-mapped address as its IPv4 address.
  return { url: parsed, addresses: addresses.map((address) => parseAddress(address).toString()) };
}

/** Throws DestinationRefused unless `url` may receive webhooks now: what saving an endpoint checks. */
export async function checkDestination(
  url: string,
  { allowPrivate, resolve }: { allowPrivate: boolean; resolve: Resolver },
): Promise<void> {
  // The operator trusts every destination: a name that does not resolve yet fails at delivery.
  if (allowPrivate) parseDestination(url);
  else await resolveDestination(url, { allowPrivate, resolve });
}
