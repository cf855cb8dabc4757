// Whether LiveKit receives what the job publishes. A publication is only a promise: LiveKit
// lists a track among the participant's once its first packets arrived, and says "publish
// time out" 30 s later when they never do (a publisher connection that never came up). The
// job cannot tell from its side; the visitor sees a call with no face and no voice, and the
// job holds on to a wedged connection (on CI its stop then held for 45 s). So the job asks
// LiveKit, and a job whose tracks never arrive hands the session to a new one.
import { RoomServiceClient } from 'livekit-server-sdk';
import type { LivekitAccess } from '../room-at-livekit.ts';

/**
 * How long after the first frame went out LiveKit may take to list the tracks: on loopback
 * they arrive within a second, under a busy CI machine within a few (LiveKit's own verdict
 * comes at 30 s, too late for a visitor who is watching).
 */
const TRACKS_ARRIVE_WITHIN_MS = 10_000;
const LOOK_EVERY_MS = 500;

export interface TrackDeliveryCheck {
  access: LivekitAccess;
  roomName: string;
  /** The job's own participant. */
  identity: string;
  /** The tracks published, by LiveKit's ids. */
  trackSids: string[];
  withinMs?: number;
  /** Aborted when the job leaves: the answer no longer matters. */
  signal?: AbortSignal;
}

/**
 * `'received'` once LiveKit lists every track; `'missing'` with those it never listed; `'unknown'`
 * when LiveKit's API could not say (out of reach, no credentials, the job no longer in the room,
 * or the job left): only a definite answer may move a session.
 */
export async function tracksReceived(
  check: TrackDeliveryCheck,
): Promise<{ state: 'received' } | { state: 'missing'; missing: string[] } | { state: 'unknown' }> {
  const { access, signal } = check;
  if (!access.apiKey || !access.apiSecret || check.trackSids.length === 0) return { state: 'unknown' };
  const rooms = new RoomServiceClient(access.url.replace(/^ws/, 'http'), access.apiKey, access.apiSecret, {
    requestTimeout: 3,
  });
  const deadline = performance.now() + (check.withinMs ?? TRACKS_ARRIVE_WITHIN_MS);
  let missing = check.trackSids;
  let answered = false;
  while (!signal?.aborted) {
    try {
      const participant = await rooms.getParticipant(check.roomName, check.identity);
      const listed = new Set(participant.tracks.map((track) => track.sid));
      missing = check.trackSids.filter((sid) => !listed.has(sid));
      answered = true;
      if (missing.length === 0) return { state: 'received' };
    } catch {
      // Not in the room (any more), or LiveKit busy: only the last answer before the deadline counts.
      answered = false;
    }
    if (performance.now() >= deadline) break;
    await Bun.sleep(LOOK_EVERY_MS);
  }
  return answered && !signal?.aborted ? { state: 'missing', missing } : { state: 'unknown' };
}
