// Who a request comes from, for the throttles that count per client address. The socket's
// address, unless it is a proxy the operator trusts (TRUSTED_PROXIES: addresses and CIDRs):
// then the address that proxy forwarded (`X-Forwarded-For`, read from its right end, past any
// further trusted proxies). Untrusted senders' X-Forwarded-For is ignored: anyone can write it.
// The throttles count an IPv6 client by its network (LIMIT_IPV6_PREFIX, /64), not its address:
// one customer line is given a whole /64, whose addresses it can use one after another.
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** `::ffff:10.0.0.1` (an IPv4 client on an IPv6 socket) is 10.0.0.1. */
const plain = (address: string) => address.trim().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
const family = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/**
 * What a per-address limit counts `address` under: an IPv4 address (IPv4-mapped IPv6 too) as
 * it is, an IPv6 address as its network of `ipv6Prefix` bits (`2001:db8:1:2::/64`).
 */
export function limitKeyOf(address: string, ipv6Prefix: number): string {
  if (!isIP(address) || !ipaddr.isValid(address)) return address;
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv4') return ip.toString();
  const v6 = ip as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${v6.toNormalizedString()}/${ipv6Prefix}`).toString()}/${ipv6Prefix}`;
}

export class CallerAddress {
  readonly #trusted = new BlockList();
  readonly #any: boolean;
  readonly #ipv6Prefix: number;

  constructor(trustedProxies: readonly string[], ipv6Prefix: number) {
    this.#ipv6Prefix = ipv6Prefix;
    for (const entry of trustedProxies) {
      const [address = '', prefix] = entry.split('/');
      if (!isIP(address) || (prefix !== undefined && !/^\d{1,3}$/.test(prefix)))
        throw new Error(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR`);
      if (prefix === undefined) this.#trusted.addAddress(address, family(address));
      else this.#trusted.addSubnet(address, Number(prefix), family(address));
    }
    this.#any = trustedProxies.length > 0;
  }

  /** The client's address for a request that reached us from `socketAddress`. */
  of(request: Request, socketAddress: string | undefined): string {
    let address = plain(socketAddress ?? 'unknown');
    if (!this.#any) return address;
    const forwarded = (request.headers.get('x-forwarded-for') ?? '').split(',').map(plain).filter(Boolean);
    while (isIP(address) && this.#trusted.check(address, family(address)) && forwarded.length) {
      const next = forwarded.pop()!;
      if (!isIP(next)) break;
      address = next;
    }
    return address;
  }

  /** The key the per-address limits count this request's client under (`limitKeyOf`). */
  limitKey(request: Request, socketAddress: string | undefined): string {
    return limitKeyOf(this.of(request, socketAddress), this.#ipv6Prefix);
  }
}
