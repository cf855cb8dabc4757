// A session's recording (docs/api.md#recordings): the agent's job records what the visitor saw
// and heard (agent/recording) as fragmented MP4 and sends it to the control plane in numbered
// chunks as it goes (src/recordings), so a worker that dies mid-session loses seconds, not the
// file. Each job that served the session sends one part; once the session ended and every part
// is in (or the wait for a lost job's last chunk ran out), the control plane joins the parts
// into one MP4 (H.264 + AAC, faststart) and stores it. Only the job holding the session's
// report token may send them (the job door, src/auth/job-tokens.ts).
import { type Static, Type } from '@sinclair/typebox';

/** A recording's life: chunks arriving, being joined, stored, or failed (with a reason). */
export const RECORDING_STATUSES = ['recording', 'processing', 'ready', 'failed'] as const;
export type RecordingStatus = (typeof RECORDING_STATUSES)[number];

/** The largest chunk a job sends: a few seconds of 25 fps video at the avatar's bitrate, with room to spare. */
export const RECORDING_CHUNK_MAX_BYTES = 4 * 1024 * 1024;
/** How often a job sends what it recorded: the most a worker killed mid-session loses. */
export const RECORDING_CHUNK_SECONDS = 2;
/** A chunk's number within its part: 0, 1, 2… (a part of a day's session at 2 s a chunk stays far below). */
export const RECORDING_MAX_CHUNKS = 100_000;
/** The start's `recording_notice`, said before the greeting. */
export const RECORDING_NOTICE_MAX_CHARS = 300;

/** A part's name: the LiveKit job id of the job that recorded it (letters, digits and `_`). */
export const RECORDING_PART_PATTERN = '^\\w{1,64}$';

/** Where a job sends its chunks: PUT, the chunk's bytes as `application/octet-stream`. */
export function recordingChunkPath(sessionId: string, part: string, chunk: number): string {
  return `/internal/sessions/${sessionId}/recording/parts/${part}/chunks/${chunk}`;
}

/**
 * On each chunk: when the part's recording began (epoch ms, the job's clock). Parts are laid on
 * the session's clock with it, so captions stay on the words after a failover's gap (the file has
 * no gap: the next part follows the last).
 */
export const RECORDING_PART_STARTED_HEADER = 'x-recording-part-started-at';

/** Where a job says its part is complete: POST, a `RecordingPartDone`. */
export function recordingPartDonePath(sessionId: string, part: string): string {
  return `/internal/sessions/${sessionId}/recording/parts/${part}/done`;
}

/** A job's last word on its part, after its last chunk. */
export const RecordingPartDone = Type.Object({
  /** How many chunks the part has (0 … chunks-1 were sent). */
  chunks: Type.Integer({ minimum: 0, maximum: RECORDING_MAX_CHUNKS }),
  /** The part's length, from the frames recorded. */
  duration_ms: Type.Integer({ minimum: 0 }),
});
export type RecordingPartDone = Static<typeof RecordingPartDone>;
