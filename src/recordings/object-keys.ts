// Where a recording's bytes live in the service's object store (src/assets/store.ts): the chunks
// a job sends, kept until joined, and the joined file.

/** Chunk numbers are padded so that the store lists a part's chunks in order. */
const CHUNK_DIGITS = 6;

/** Everything of one session's recording (its chunks and its file): removed with it. */
export function recordingPrefix(sessionId: string): string {
  return `recordings/${sessionId}/`;
}

/** Every chunk of every part of a session: removed once joined (or failed, or deleted). */
export function chunksPrefix(sessionId: string): string {
  return `recordings/${sessionId}/parts/`;
}

/** One part's chunks. */
export function partPrefix(sessionId: string, part: string): string {
  return `recordings/${sessionId}/parts/${part}/`;
}

/** One chunk of fragmented MP4 (`.m4s`, a media segment). */
export function chunkKey(sessionId: string, part: string, chunk: number): string {
  return `${partPrefix(sessionId, part)}${String(chunk).padStart(CHUNK_DIGITS, '0')}.m4s`;
}

/** The chunk number of a key chunkKey made, or undefined for anything else. */
export function chunkNumberOf(key: string): number | undefined {
  const match = /\/(\d+)\.m4s$/.exec(key);
  return match ? Number(match[1]) : undefined;
}

/** The joined recording, served by signed links (src/assets). */
export function recordingFileKey(sessionId: string): string {
  return `recordings/${sessionId}/recording.mp4`;
}
