// The avatar listens, so the microphone is asked for before a session starts: a visitor who
// cannot speak (an insecure page, a refusal, no device) is told why, and nothing is started.

/** Null when the microphone works (the browser may prompt); otherwise what to do about it. */
export async function microphoneProblem(framed: boolean): Promise<string | null> {
  if (!window.isSecureContext || !navigator.mediaDevices?.getUserMedia)
    return 'Talking to the avatar needs the microphone, which browsers allow only on a secure (https://) page.';
  try {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    // The room opens its own track once joined; this one only proved it can.
    for (const track of stream.getTracks()) track.stop();
    return null;
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    if (name === 'NotFoundError') return 'No microphone was found. Plug one in and call again.';
    if (name === 'NotAllowedError' || name === 'SecurityError')
      return framed
        ? 'The microphone is blocked. The page showing this frame must allow it (<iframe allow="microphone; camera; autoplay">), and so must you.'
        : 'The browser blocked the microphone. Allow it for this site, then call again.';
    return 'The microphone could not be started. Call again in a moment.';
  }
}
