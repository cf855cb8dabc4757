// A session's conversation as WebVTT (docs/api.md#captions): one cue per visitor or agent turn
// of its transcript, on the recording's timeline: laid over its parts once it is joined (a
// failover's gap is not in the file), else timed from when the avatar started streaming (where
// the recording starts), or the session's creation when it never streamed. Tool turns are not
// speech: left out.
import { and, asc, eq, isNotNull } from 'drizzle-orm';
import type { Database } from '../db/index.ts';
import { sessionTranscripts } from '../sessions/schema.ts';
import { recordingParts } from './schema.ts';

const VOICES = { user: 'Visitor', agent: 'Agent' } as const;

/** A cue whose turn has no end time: about as long as it takes to say, within reason. */
const MS_PER_CHAR = 60;
const MIN_CUE_MS = 1000;
const MAX_GUESSED_CUE_MS = 10_000;

export interface CaptionTurn {
  role: string;
  text: string;
  startedAt: Date;
  endedAt: Date | null;
}

/** `hh:mm:ss.ttt`, as WebVTT times are written. */
export function vttTime(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor(whole / 60_000) % 60;
  const seconds = Math.floor(whole / 1000) % 60;
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(hours)}:${pad(minutes)}:${pad(seconds)}.${pad(whole % 1000, 3)}`;
}

/**
 * Cue text as WebVTT reads it: `&`, `<` and `>` escaped (so no `-->` and no tag can be made),
 * and no blank line (it would end the cue).
 */
export function cueText(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replace(/\r\n?/g, '\n')
    .replace(/\n\s*\n+/g, '\n')
    .trim();
}

/** A part of a joined recording: when it began on the session's clock, and how long it lasts in the file. */
export interface JoinedPart {
  startedAt: Date;
  joinedMs: number;
}

/**
 * Where a moment of the session falls in the joined file (ms). The parts follow one another
 * with no gap, so a moment between two parts falls where the next begins, and one before the
 * first or after the last at the file's start or end.
 */
export function fileTimeOf(at: Date, parts: readonly JoinedPart[]): number {
  let offset = 0;
  for (const part of parts) {
    const into = at.getTime() - part.startedAt.getTime();
    if (into < 0) return offset;
    if (into <= part.joinedMs) return offset + into;
    offset += part.joinedMs;
  }
  return offset;
}

/** The WebVTT file of these turns, at the times `timeOf` gives (ms into the recording). */
export function webVtt(turns: readonly CaptionTurn[], timeOf: (at: Date) => number): string {
  const cues: string[] = [];
  for (const turn of turns) {
    const voice = VOICES[turn.role as keyof typeof VOICES];
    const text = cueText(turn.text);
    if (!voice || !text) continue;
    const start = Math.max(0, timeOf(turn.startedAt));
    const guessed = Math.min(MAX_GUESSED_CUE_MS, Math.max(MIN_CUE_MS, text.length * MS_PER_CHAR));
    const end = Math.max(start + MIN_CUE_MS / 10, turn.endedAt ? timeOf(turn.endedAt) : start + guessed);
    cues.push(`${cues.length + 1}\n${vttTime(start)} --> ${vttTime(end)}\n<v ${voice}>${voice}: ${text}</v>`);
  }
  return `WEBVTT\n\n${cues.map((cue) => `${cue}\n\n`).join('')}`;
}

/** The captions of a session's whole conversation. */
export async function captionsOf(
  db: Database,
  session: { id: string; createdAt: Date; streamingStartedAt: Date | null },
): Promise<string> {
  const turns = await db
    .select({
      role: sessionTranscripts.role,
      text: sessionTranscripts.text,
      startedAt: sessionTranscripts.startedAt,
      endedAt: sessionTranscripts.endedAt,
    })
    .from(sessionTranscripts)
    .where(eq(sessionTranscripts.sessionId, session.id))
    .orderBy(asc(sessionTranscripts.startedAt), asc(sessionTranscripts.seq));
  const parts = await db
    .select({ startedAt: recordingParts.startedAt, joinedMs: recordingParts.joinedMs })
    .from(recordingParts)
    .where(and(eq(recordingParts.sessionId, session.id), isNotNull(recordingParts.joinedMs)))
    .orderBy(asc(recordingParts.startedAt), asc(recordingParts.part));
  if (parts.length > 0) {
    const joined = parts.map((part) => ({ startedAt: part.startedAt, joinedMs: part.joinedMs! }));
    return webVtt(turns, (at) => fileTimeOf(at, joined));
  }
  const origin = (session.streamingStartedAt ?? session.createdAt).getTime();
  return webVtt(turns, (at) => at.getTime() - origin);
}
