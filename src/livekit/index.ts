// LiveKit: the local server of the embedded default, and where its binary is.

export { isNotFound, type LivekitConnection } from './connection.ts';
export { LocalLivekitServer, type LocalLivekitServerOptions } from './local-server.ts';

/**
 * The livekit-server binary that the bootstrap built (src/bootstrap/livekit.mjs) and
 * exported as LIKENESS_LIVEKIT_BIN to the processes it starts.
 */
export function livekitBinary(): string {
  const binary = process.env.LIKENESS_LIVEKIT_BIN;
  if (!binary) {
    throw new Error(
      'LIKENESS_LIVEKIT_BIN is not set: run via npm start / npm test, which build the LiveKit server ' +
        '(or set LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET to use an external one)',
    );
  }
  return binary;
}
