// The addresses a client is given (an identity's `image` and `audio`, a session's `rtc_url`):
// the service's own (ASSETS_URL, LIVEKIT_PUBLIC_URL), or, for a client that came in over the
// HTTPS listener, https and wss on the host it used, so that a page served over HTTPS loads
// nothing over plain HTTP (mixed content) and joins its room over wss. Only where the operator
// left those addresses to their defaults (TlsSettings.addressesFollowRequest).
import type { AssetLinks } from '../assets/links.ts';
import type { TlsSettings } from '../config.ts';
import { secureListenerOf } from './listeners.ts';

export interface ClientUrls {
  /** Signed links to stored assets, on the base this client reaches. */
  links: AssetLinks;
  /** Where this client joins a session's room. */
  rtcUrl: string;
}

export type UrlsFor = (request: Request) => ClientUrls;

export function clientUrls(deps: { links: AssetLinks; rtcUrl: string; tls: TlsSettings | undefined }): UrlsFor {
  const usual: ClientUrls = { links: deps.links, rtcUrl: deps.rtcUrl };
  const follow = deps.tls?.addressesFollowRequest;
  return (request) => {
    if (!follow || !secureListenerOf(request)) return usual;
    // The host and port the client used (Bun builds request.url from its Host header).
    const { host } = new URL(request.url);
    return {
      links: follow.assets ? deps.links.withBase(`https://${host}/assets`) : deps.links,
      rtcUrl: follow.rtc ? `wss://${host}` : deps.rtcUrl,
    };
  };
}
