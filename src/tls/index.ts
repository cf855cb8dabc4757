// HTTPS beside plain HTTP (docs/api.md#reaching-the-service): the same app, the console, the API
// and LiveKit's signalling (/rtc), on TLS_PORT with the operator's certificate or one made here
// (certificate.ts). A phone on the network opens https://<host address>:8443/console, accepts
// the self-made certificate once, and may then use its microphone. The plain port stays, for
// this machine and for a TLS proxy in front.
import type { Server } from 'bun';
import { websocket } from 'elysia/ws';
import type { Config, TlsSettings } from '../config.ts';
import { noteSecureArrival } from '../http/listeners.ts';
import { type Certificate, certificateFor, hostSubjects } from './certificate.ts';

export interface SecureListener {
  /** `https://<address>:<port>` as people on the network open it. */
  url: string;
  certificate: Certificate;
  stop(): Promise<void>;
}

/** Serves `app` over TLS on `tls.port` (the host and body cap of the plain listener). */
export async function listenSecurely(
  app: { fetch(request: Request): Response | Promise<Response> },
  config: Config,
  tls: TlsSettings,
): Promise<SecureListener> {
  const nodeIp = config.livekit.media.nodeIp;
  const certificate = await certificateFor(tls, config.dataDir, hostSubjects([nodeIp]));
  let server: Server<unknown>;
  try {
    server = Bun.serve({
      port: tls.port,
      hostname: config.host,
      reusePort: false,
      maxRequestBodySize: config.maxRequestBytes * 2,
      tls: { cert: certificate.cert, key: certificate.key },
      fetch(request, listener) {
        noteSecureArrival(request, listener);
        return app.fetch(request);
      },
      // Elysia's own (its types lag Bun's): an upgraded socket's data carries its handlers (the signal proxy's tunnel).
      websocket: websocket as unknown as Bun.WebSocketHandler<unknown>,
    });
  } catch (error) {
    if ((error as { code?: string }).code === 'EADDRINUSE') {
      throw new Error(
        `TLS_PORT ${tls.port} (HTTPS) is taken, by another Likeness on this host perhaps: set another, or 0 for none`,
      );
    }
    throw error;
  }
  const host = nodeIp === '127.0.0.1' ? 'localhost' : nodeIp;
  return {
    url: `https://${host}:${server.port}`,
    certificate,
    stop: async () => void (await server.stop(false)),
  };
}
