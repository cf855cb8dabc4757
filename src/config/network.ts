// Where the service is reached (docs/api.md#reaching-the-service): the local LiveKit server's
// media ports on the host's address, and HTTPS beside plain HTTP so that a phone's browser may
// use its microphone.
import { networkInterfaces } from 'node:os';
import { type Env, integer, portRange } from './environment.ts';

/**
 * Where clients send the local LiveKit server's media: UDP ports on the host's address, with
 * ICE over TCP as the fallback for networks that block UDP. Its signalling never needs a port
 * of its own: clients reach it through this service's /rtc.
 */
export interface LocalMediaSettings {
  /**
   * The address put in the ICE candidates (LIVEKIT_NODE_IP). Default: the host's first
   * non-loopback IPv4 address, or 127.0.0.1 when HOST is a loopback address or the host has
   * none. 127.0.0.1 keeps everything on loopback (the service's own machine only).
   */
  nodeIp: string;
  /** UDP ports for WebRTC media, one per peer connection (LIVEKIT_UDP_PORTS, `start-end`); unset on loopback: a free run. */
  udpPorts: { start: number; end: number } | undefined;
  /** ICE over TCP (LIVEKIT_TCP_PORT); 0: none. */
  tcpPort: number;
}

/**
 * HTTPS beside plain HTTP, on a port of its own (docs/api.md#reaching-the-service): browsers let
 * a page use the microphone only on a secure origin (HTTPS, or localhost), so a phone on the
 * network needs it to talk. On by default unless the service listens on loopback alone.
 */
export interface TlsSettings {
  /** TLS_PORT (8443); 0 turns the listener off. */
  port: number;
  /** TLS_CERT_FILE and TLS_KEY_FILE (PEM): the operator's certificate; unset: one made and kept in DATA_DIR/tls for this host's names and addresses. */
  certFile: string | undefined;
  keyFile: string | undefined;
  /**
   * Whether clients that come in over it are given https/wss addresses on the host they used
   * (their identities' `image` and `audio`, a session's `rtc_url`), rather than PUBLIC_URL's,
   * ASSETS_URL's and LIVEKIT_PUBLIC_URL's: true unless those are set (the operator decided).
   */
  addressesFollowRequest: { assets: boolean; rtc: boolean };
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host.startsWith('127.');

/** The host's first non-loopback IPv4 address, as other machines on its network reach it. */
export function hostAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) if (address.family === 'IPv4' && !address.internal) return address.address;
  }
  return undefined;
}

/** Defaults for ports a firewall must open (README "Deploy"): 100 media ports, LiveKit's usual ICE/TCP port. */
export const DEFAULT_UDP_PORTS = { start: 50_000, end: 50_099 };
export const DEFAULT_ICE_TCP_PORT = 7881;

export function loadLocalMedia(env: Env, host: string): LocalMediaSettings {
  const nodeIp = env.LIVEKIT_NODE_IP?.trim() || (isLoopback(host) ? '127.0.0.1' : (hostAddress() ?? '127.0.0.1'));
  if (isLoopback(nodeIp)) {
    // Loopback: nothing for a firewall, so free ports picked at each start (tests run many servers).
    return {
      nodeIp: '127.0.0.1',
      udpPorts: portRange(env, 'LIVEKIT_UDP_PORTS'),
      tcpPort: integer(env, 'LIVEKIT_TCP_PORT', 0),
    };
  }
  return {
    nodeIp,
    udpPorts: portRange(env, 'LIVEKIT_UDP_PORTS') ?? DEFAULT_UDP_PORTS,
    tcpPort: integer(env, 'LIVEKIT_TCP_PORT', DEFAULT_ICE_TCP_PORT),
  };
}

/** The default TLS_PORT. */
export const DEFAULT_TLS_PORT = 8443;

export function loadTls(env: Env, host: string): TlsSettings | undefined {
  const certFile = env.TLS_CERT_FILE || undefined;
  const keyFile = env.TLS_KEY_FILE || undefined;
  if (Boolean(certFile) !== Boolean(keyFile))
    throw new Error('TLS_CERT_FILE and TLS_KEY_FILE go together: set both, or neither for a certificate made here');
  // On loopback alone the browser is on this machine, and localhost is a secure origin already.
  const port = integer(env, 'TLS_PORT', isLoopback(host) && !certFile ? 0 : DEFAULT_TLS_PORT);
  if (port === 0) return undefined;
  return {
    port,
    certFile,
    keyFile,
    addressesFollowRequest: {
      assets: !env.ASSETS_URL && !env.PUBLIC_URL,
      rtc: !env.LIVEKIT_PUBLIC_URL && !env.PUBLIC_URL,
    },
  };
}

/** http(s)://… as ws(s)://… (browsers on an https page may only open wss). */
export function websocketUrlOf(url: string): string {
  return url.replace(/^http(s?):\/\//, 'ws$1://');
}
