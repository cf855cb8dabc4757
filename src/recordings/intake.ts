// The job's side of a recording (docs/api.md#internal, src/contract/recordings.ts): PUT
// /internal/sessions/{id}/recording/parts/{part}/chunks/{n} stores a chunk of fragmented MP4 in
// the service's object store, POST …/parts/{part}/done says the part is complete. Admitted by the
// job door (src/auth/job-tokens.ts: the session's report token; a chunk's declared length
// at most RECORDING_CHUNK_MAX_BYTES, the rest at the reports' bound), before any body is read.
import { eq, sql } from 'drizzle-orm';
import { Elysia } from 'elysia';
import type { AssetStore } from '../assets/index.ts';
import { jobSession } from '../auth/index.ts';
import {
  RECORDING_CHUNK_MAX_BYTES,
  RECORDING_MAX_CHUNKS,
  RECORDING_PART_STARTED_HEADER,
  RecordingPartDone,
} from '../contract/recordings.ts';
import type { Database, Queryable } from '../db/index.ts';
import { ApiError, invalid } from '../http/errors.ts';
import { RecordingChunkParams, RecordingPartParams } from './contract.ts';
import { chunkKey } from './object-keys.ts';
import { recordingParts, recordings } from './schema.ts';

export interface IntakeDeps {
  db: Database;
  store: AssetStore;
}

/**
 * The body, read up to `max` bytes: the door refused a larger declared length, and this stops
 * a body longer than it declared (no buffering past the bound, whatever the client sends).
 */
export async function readBounded(request: Request, max: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  const limit = Number.isFinite(declared) ? Math.min(declared, max) : max;
  if (!request.body) return new Uint8Array(0);
  const bytes = new Uint8Array(limit);
  let length = 0;
  const reader = request.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (length + value.byteLength > limit) {
        throw new ApiError(413, `Request body too large: at most ${limit} bytes`);
      }
      bytes.set(value, length);
      length += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return bytes.subarray(0, length);
}

/**
 * The session's recording, while it takes media. In a transaction (`lock`) its row stays locked
 * until the end: the finisher's claim waits for a chunk being counted, and the reverse.
 */
async function openRecording(q: Queryable, sessionId: string, lock = false) {
  const query = q.select().from(recordings).where(eq(recordings.sessionId, sessionId));
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw new ApiError(409, 'This session is not recorded');
  if (row.status !== 'recording') throw new ApiError(409, `The recording is ${row.status}: it takes no more media`);
  return row;
}

/** How far a job's clock may be from ours and still be taken for the part's start. */
const CLOCK_SKEW_MS = 60_000;

/**
 * When the part's recording began, as its job says (contract RECORDING_PART_STARTED_HEADER),
 * if that lies between the session's creation and now (give or take a skewed clock); otherwise
 * now, when its first chunk came (which lags the start by a chunk's length).
 */
export function partStart(header: string | null, sessionCreatedAt: Date, now = new Date()): Date {
  const said = header && /^\d{1,15}$/.test(header) ? Number(header) : Number.NaN;
  const plausible = said >= sessionCreatedAt.getTime() - CLOCK_SKEW_MS && said <= now.getTime() + CLOCK_SKEW_MS;
  return plausible ? new Date(Math.min(said, now.getTime())) : now;
}

export function recordingIntakeRoutes(deps: IntakeDeps) {
  const { db, store } = deps;
  return new Elysia({ prefix: '/internal', detail: { hide: true } })
    .put(
      '/sessions/:session_id/recording/parts/:part/chunks/:chunk',
      async ({ params, request, body }) => {
        const session = await jobSession(db, request, params.session_id);
        const chunk = Number(params.chunk);
        if (chunk >= RECORDING_MAX_CHUNKS)
          throw invalid(['path', 'chunk'], `chunk: at most ${RECORDING_MAX_CHUNKS - 1}`, 'less_than_equal');
        // No body at all is not parsed; JSON or a form was parsed as such (src/http/body.ts) before this route's own parser.
        const sent = body === undefined || request.headers.get('content-length') === '0' ? new Blob([]) : body;
        if (!(sent instanceof Blob)) throw new ApiError(415, 'A chunk is sent as application/octet-stream');
        await openRecording(db, session.id);
        const bytes = await sent.bytes();
        if (bytes.byteLength === 0) throw invalid(['body'], 'A chunk has at least one byte', 'empty_chunk');
        // Stored before it is counted: a part's count never names a chunk the store lacks. A
        // chunk sent again (a retry) replaces itself with the same bytes.
        const key = chunkKey(session.id, params.part, chunk);
        await store.put(key, bytes, 'video/iso.segment');
        try {
          await db.transaction(async (tx) => {
            await openRecording(tx, session.id, true);
            await tx
              .insert(recordingParts)
              .values({
                sessionId: session.id,
                part: params.part,
                chunksReceived: chunk + 1,
                startedAt: partStart(request.headers.get(RECORDING_PART_STARTED_HEADER), session.createdAt),
              })
              .onConflictDoUpdate({
                target: [recordingParts.sessionId, recordingParts.part],
                set: { chunksReceived: sql`greatest(${recordingParts.chunksReceived}, ${chunk + 1})` },
              });
          });
        } catch (error) {
          // Joined meanwhile: this chunk is in no file, and the chunks' folder is being emptied.
          await store.delete(key).catch(() => {});
          throw error;
        }
        return { ok: true };
      },
      {
        params: RecordingChunkParams,
        // The door admitted the token and the declared length before this reads a byte.
        // A Blob: what every later step passes over whole (a byte array would be walked byte by byte as an object).
        parse: async ({ request }) => new Blob([await readBounded(request, RECORDING_CHUNK_MAX_BYTES)]),
      },
    )
    .post(
      '/sessions/:session_id/recording/parts/:part/done',
      async ({ params, body, request }) => {
        const session = await jobSession(db, request, params.session_id);
        await db.transaction(async (tx) => {
          await openRecording(tx, session.id, true);
          const said = { chunks: body.chunks, durationMs: body.duration_ms, doneAt: new Date() };
          await tx
            .insert(recordingParts)
            .values({ sessionId: session.id, part: params.part, ...said })
            .onConflictDoUpdate({ target: [recordingParts.sessionId, recordingParts.part], set: said });
        });
        return { ok: true };
      },
      { params: RecordingPartParams, body: RecordingPartDone, parse: 'json' },
    );
}
