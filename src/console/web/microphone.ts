// Talk needs the visitor's microphone, so it asks for it before a session starts: a page that
// cannot have one (an insecure origin, a refused permission, no device) says why and how to
// fix it, and nothing is started or billed for a visitor who cannot speak.

/** What went wrong, in words, and where to go instead when another address would work. */
export interface MicrophoneProblem {
  message: string;
  link?: { href: string; text: string };
}

/** The HTTPS listener's default port (TLS_PORT, README "The console"). */
const HTTPS_PORT = 8443;

/**
 * Browsers give a page the microphone only on a secure origin: HTTPS, or localhost. Known as
 * soon as the page loads, before any click.
 */
export function insecurePage(): MicrophoneProblem | null {
  if (window.isSecureContext) return null;
  const secure =
    location.protocol === 'http:'
      ? `https://${location.hostname}:${HTTPS_PORT}${location.pathname}${location.hash}`
      : null;
  return {
    message:
      'Talk needs your microphone, and browsers allow it only on a secure page. Open the console over HTTPS, at the https:// address `npm start` printed' +
      (secure
        ? ' (with the default port, the link below; on the first visit choose Advanced, then Proceed, at the certificate warning)'
        : '') +
      ', or at http://localhost on the service’s own machine. No session was started.',
    ...(secure ? { link: { href: secure, text: secure } } : {}),
  };
}

/** Asks for the microphone (the browser may prompt) and lets it go again; null when it works. */
export async function microphoneProblem(): Promise<MicrophoneProblem | null> {
  const insecure = insecurePage();
  if (insecure) return insecure;
  if (!navigator.mediaDevices?.getUserMedia) {
    return {
      message:
        'This browser gives web pages no microphone, so no session was started. Open the console in a current Chrome, Edge, Firefox or Safari.',
    };
  }
  try {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    // The room opens its own track once joined; this one only proved it can.
    for (const track of stream.getTracks()) track.stop();
    return null;
  } catch (error) {
    return { message: refusal(error) };
  }
}

function refusal(error: unknown): string {
  const name = error instanceof Error ? error.name : '';
  switch (name) {
    case 'NotAllowedError':
    case 'SecurityError':
      return 'The browser blocked the microphone for this site, so no session was started. Allow it: click the icon left of the address (a lock or sliders), set Microphone to Allow, then press Start again.';
    case 'NotFoundError':
    case 'OverconstrainedError':
      return 'No microphone was found, so no session was started. Plug one in or connect a headset, then press Start again.';
    case 'NotReadableError':
    case 'AbortError':
      return 'The microphone could not be started: another app may be using it. Close that app, then press Start again. No session was started.';
    default:
      return `The microphone could not be started (${error instanceof Error ? error.message : String(error)}), so no session was started.`;
  }
}
