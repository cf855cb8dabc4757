// Who a request comes from, for the throttles that count per client address. The socket's
// address, unless it is a proxy the operator trusts (TRUSTED_PROXIES: addresses and CIDRs):
// then the address that proxy forwarded (`X-Forwarded-For`, read from its right end, past any
// further trusted proxies). Untrusted senders' X-Forwarded-For is ignored: anyone can write it.
import { BlockList, isIP } from 'node:net';

/** `::ffff:10.0.0.1` (an IPv4 client on an IPv6 socket) is 10.0.0.1. */
const plain = (address: string) => address.trim().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
const family = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

export class ClientAddresses {
  readonly #trusted = new BlockList();
  readonly #any: boolean;

  constructor(trustedProxies: readonly string[]) {
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
}
