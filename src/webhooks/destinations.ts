// Where a webhook may be sent: http(s) URLs whose host resolves only to public addresses, so a
// customer cannot point the service at its own network (metadata services, databases, admin
// ports). Checked when an endpoint is saved and again before every delivery, since a name can
// resolve elsewhere later (DNS rebinding). WEBHOOKS_ALLOW_PRIVATE lifts the address rule.
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** A host's addresses; injectable so tests can play a name that changes what it points at. */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The destination is refused; the message says why, for the customer. */
export class DestinationRefused extends Error {}

/** True for globally routable unicast addresses (IPv4-mapped IPv6 judged as the IPv4 it carries). */
export function isPublicAddress(address: string): boolean {
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() === 'unicast';
}

/** Throws DestinationRefused unless `url` may receive webhooks now. */
export async function checkDestination(url: string, { allowPrivate, resolve }: { allowPrivate: boolean; resolve: Resolver }): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DestinationRefused('not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new DestinationRefused('only http and https URLs can receive webhooks');
  // The operator trusts every destination: a name that does not resolve yet fails at delivery.
  if (allowPrivate) return;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (ipaddr.isValid(host)) addresses = [host];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new DestinationRefused(`${host} does not resolve`);
    }
    if (addresses.length === 0) throw new DestinationRefused(`${host} does not resolve`);
  }
  const refused = addresses.find((address) => !isPublicAddress(address));
  if (refused) {
    const where = refused === host ? `${host} is` : `${host} resolves to ${refused},`;
    throw new DestinationRefused(`${where} not a public address (private, loopback, link-local or reserved)`);
  }
}
