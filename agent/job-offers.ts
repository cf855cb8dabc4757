// How the worker answers LiveKit's offers of jobs: the one rule both the worker and its tests use.

import type { RoomServiceClient } from 'livekit-server-sdk';

export interface JobOfferRules {
  /** Looks the offered rooms up. */
  rooms: Pick<RoomServiceClient, 'listRooms'>;
  /** Sessions it takes at once. */
  capacity: number;
  /** Sessions the worker runs or has accepted (an accepted job counts from its accept() on). */
  taken: () => number;
}

/**
 * Answers each offer `reject` when its room is gone (a session that ended before its job was
 * offered: no warm process is spent finding that out) or the worker is full (LiveKit hears the
 * load only now and then, and may offer a full worker a job its pool, warm only for free
 * slots, would wait for). A rejected job goes to another worker. If LiveKit does not answer the
 * room lookup, `accept`: a session is not refused its agent over a slow lookup.
 *
 * A burst's offers are answered together, each after its lookup: the others still being
 * answered count as taken, or all of them pass the capacity check at once and pile up in the
 * agents' pool (seen under load). The caller accepts at once on `accept`, with no wait between.
 */
export function jobOfferAnswerer(rules: JobOfferRules): (room: string | undefined) => Promise<'accept' | 'reject'> {
  let answering = 0;
  return async (room) => {
    answering++;
    try {
      const gone = room
        ? await rules.rooms.listRooms([room]).then(
            (found) => found.length === 0,
            () => false,
          )
        : false;
      return gone || rules.taken() + answering - 1 >= rules.capacity ? 'reject' : 'accept';
    } finally {
      answering--;
    }
  };
}
