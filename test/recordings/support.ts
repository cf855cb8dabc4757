// What the recordings' suites share: fragmented MP4 as the agent's recorder makes it (real
// ffmpeg), a recorded session written into the database as the start would make it, and the
// job's calls with the session's report token.
import { eq, sql } from 'drizzle-orm';
import {
  RECORDING_PART_STARTED_HEADER,
  recordingChunkPath,
  recordingPartDonePath,
} from '../../src/contract/recordings.ts';
import { recordings } from '../../src/recordings/schema.ts';
import { sessions } from '../../src/sessions/schema.ts';
import { runningJobSession } from '../support/job-session.ts';
import type { TestService } from '../support/service.ts';

/**
 * `seconds` of a test picture and a tone as fragmented MP4 (H.264 + AAC, a fragment per
 * keyframe), as agent/recording sends it; `size` null: the tone alone (a session recorded
 * without frames of ours), a fragment per second.
 */
export async function fragmentedMp4(
  seconds: number,
  size: string | null = '320x240',
  frequency = 440,
): Promise<Uint8Array> {
  const picture = size ? ['-f', 'lavfi', '-i', `testsrc=size=${size}:rate=25`] : [];
  const pictureCodec = size
    ? ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '25']
    : ['-frag_duration', '1000000'];
  const ffmpeg = Bun.spawn(
    [
      'ffmpeg',
      '-hide_banner',
      '-v',
      'error',
      ...picture,
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=${frequency}:sample_rate=48000`,
      '-t',
      String(seconds),
      ...pictureCodec,
      '-c:a',
      'aac',
      '-movflags',
      'frag_keyframe+empty_moov+default_base_moof',
      '-f',
      'mp4',
      '-',
    ],
    { stdout: 'pipe', stderr: 'pipe' },
  );
  const [bytes, stderr, code] = await Promise.all([
    new Response(ffmpeg.stdout).bytes(),
    new Response(ffmpeg.stderr).text(),
    ffmpeg.exited,
  ]);
  if (code !== 0) throw new Error(`ffmpeg exited ${code}: ${stderr}`);
  return bytes;
}

/** Bytes cut into `count` chunks at arbitrary places (the job cuts where its buffer is, not at fragments). */
export function cut(bytes: Uint8Array, count: number): Uint8Array[] {
  const size = Math.ceil(bytes.byteLength / count);
  return Array.from({ length: count }, (_, i) => bytes.subarray(i * size, Math.min(bytes.byteLength, (i + 1) * size)));
}

export interface RecordedSession {
  id: string;
  token: string;
  chunk(part: string, n: number, bytes: Uint8Array, token?: string): Promise<Response>;
  /** The part's chunks say from now on that its recording began at `atMs` (as a job's do). */
  startPart(part: string, atMs: number): void;
  done(part: string, chunks: number, durationMs?: number): Promise<Response>;
  /** Ends the session as its lifecycle would (status, ended_at), `secondsAgo` in the past. */
  end(secondsAgo?: number): Promise<void>;
}

/** A running session with a `recording` row (the start's `record: true`; made directly, as the start does). */
export async function recordedSession(
  service: TestService,
  accountId: string,
  options: { recorded?: boolean } = {},
): Promise<RecordedSession> {
  const { id, token } = await runningJobSession(service, accountId);
  const db = service.services.database.db;
  if (options.recorded ?? true) await db.insert(recordings).values({ sessionId: id, accountId });
  const partStarts = new Map<string, number>();
  return {
    id,
    token,
    chunk: (part, n, bytes, asToken = token) =>
      fetch(`${service.url}${recordingChunkPath(id, part, n)}`, {
        method: 'PUT',
        body: bytes.slice(),
        headers: {
          authorization: `Bearer ${asToken}`,
          'content-type': 'application/octet-stream',
          ...(partStarts.has(part) && { [RECORDING_PART_STARTED_HEADER]: String(partStarts.get(part)) }),
        },
      }),
    startPart: (part, atMs) => void partStarts.set(part, atMs),
    done: (part, chunks, durationMs = 0) =>
      fetch(`${service.url}${recordingPartDonePath(id, part)}`, {
        method: 'POST',
        body: JSON.stringify({ chunks, duration_ms: durationMs }),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      }),
    async end(secondsAgo = 0) {
      await db
        .update(sessions)
        .set({ status: 'ended', endedAt: sql`now() - make_interval(secs => ${secondsAgo})` })
        .where(eq(sessions.id, id));
    },
  };
}

/** Every chunk of a part, in order; asserts each was taken. */
export async function sendPart(session: RecordedSession, part: string, chunks: Uint8Array[]): Promise<void> {
  for (const [n, bytes] of chunks.entries()) {
    const answer = await session.chunk(part, n, bytes);
    if (answer.status !== 200) throw new Error(`chunk ${n} of ${part}: ${answer.status} ${await answer.text()}`);
  }
}

/** ffprobe's view of a file: its streams and length. */
export async function probeFile(path: string): Promise<{
  streams: { codec_type: string; codec_name: string; width?: number; height?: number }[];
  format: { duration: string; size: string; format_name: string };
}> {
  const probe = Bun.spawn(['ffprobe', '-v', 'error', '-show_streams', '-show_format', '-of', 'json', path], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, code] = await Promise.all([new Response(probe.stdout).text(), probe.exited]);
  if (code !== 0) throw new Error(`ffprobe exited ${code}`);
  return JSON.parse(out);
}
