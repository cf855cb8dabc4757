// How the worker answers LiveKit's offer of a job: the one rule both the worker and its tests use.

import type { RoomServiceClient } from 'livekit-server-sdk';

export interface JobOffer {
  /** The offered job's room (a session id); absent for jobs not tied to a room. */
  room: string | undefined;
  /** Sessions this worker runs or has accepted. */
  taken: number;
  /** Sessions it takes at once. */
  capacity: number;
}

/**
 * `reject` when the room is gone (a session that ended before its job was offered: no warm
 * process is spent finding that out) or the worker is full (LiveKit hears the load only now and
 * then, and may offer a full worker a job its pool, warm only for free slots, would wait for).
 * A rejected job goes to another worker. If LiveKit does not answer the room lookup, `accept`:
 * a session is not refused its agent over a slow lookup.
 */
export async function answerJobOffer(
  offer: JobOffer,
  rooms: Pick<RoomServiceClient, 'listRooms'>,
): Promise<'accept' | 'reject'> {
  const gone = offer.room
    ? await rooms.listRooms([offer.room]).then(
        (found) => found.length === 0,
        () => false,
      )
    : false;
  if (gone || offer.taken >= offer.capacity) return 'reject';
  return 'accept';
}
