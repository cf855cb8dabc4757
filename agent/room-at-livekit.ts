// Whether LiveKit still has a job's room: the control plane deletes it at every ending, so its
// absence is what says a session is over when the job's own connection cannot (a drain's stop
// request looks like the stop LiveKit sends for a deleted room; a connection that is
// reconnecting hears of no deletion until its retries give up, about a minute).
import { RoomServiceClient } from 'livekit-server-sdk';
import type { AgentLogger } from './logging.ts';

/** What a job knows to reach LiveKit's API (agents' RunningJobInfo). */
export interface LivekitAccess {
  url: string;
  apiKey?: string;
  apiSecret?: string;
}

/** LiveKit is asked this many times, a second apart, whether the room is gone. */
const ROOM_CHECKS = 3;

/** Whether LiveKit has the room; undefined when it cannot be asked or did not answer in `tries`. */
export async function livekitHasRoom(
  access: LivekitAccess,
  roomName: string,
  logger: AgentLogger,
  tries = ROOM_CHECKS,
): Promise<boolean | undefined> {
  if (!access.apiKey || !access.apiSecret) return undefined;
  const rooms = new RoomServiceClient(access.url.replace(/^ws/, 'http'), access.apiKey, access.apiSecret, {
    requestTimeout: 3,
  });
  for (let attempt = 1; attempt <= tries; attempt++) {
    try {
      return (await rooms.listRooms([roomName])).length > 0;
    } catch (error) {
      if (attempt === tries) {
        logger.warn({ err: error }, 'LiveKit did not say whether the room is there');
        return undefined;
      }
      await Bun.sleep(1_000);
    }
  }
  return undefined;
}

/**
 * Whether the job's session is over, so its conversation is the last one to summarise: LiveKit
 * no longer has its room. A job its worker stopped while the room stays (a drain) leaves a
 * session that goes on with another agent. LiveKit out of reach: the stop request decides.
 */
export async function sessionOver(
  access: LivekitAccess,
  roomName: string,
  stoppedByWorker: boolean,
  logger: AgentLogger,
): Promise<boolean> {
  const present = await livekitHasRoom(access, roomName, logger);
  return present === undefined ? !stoppedByWorker : !present;
}
