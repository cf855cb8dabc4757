// A session's quality (docs/api.md#session-metrics): the job's turn_metrics reports folded
// into sessions.quality, the Prometheus histograms they move, and the `metrics` object
// GET /v1/sessions/{id} derives from the row.
import { eq } from 'drizzle-orm';
import type { SessionQuality, TurnMetricsReport } from '../contract/index.ts';
import type { Database } from '../db/index.ts';
import {
  deliveredFps,
  type ProviderSet,
  toolCallSeconds,
  toolCalls,
  turnInterruptions,
  turnStageSeconds,
  voiceToVoiceSeconds,
} from '../metrics/index.ts';
import type { SessionMetrics as SessionMetricsSchema } from './contract.ts';
import { sessions } from './schema.ts';

/** Voice-to-voice samples kept per session: p50/p95 over the last this many answered turns. */
export const MAX_SAMPLES = 500;
/**
 * Turn ids remembered against redelivery. A report is retried for a few seconds at most
 * (agent/reports/report-delivery.ts), during which a conversation has a handful of turns.
 */
export const MAX_TURN_IDS = 50;
/** Shorter intervals say little about a frame rate (a turn right after another). */
const MIN_FPS_SECONDS = 1;

/** sessions.quality as kept: the contract's, and the tool calls counted (absent from rows before tools: 0). */
export type StoredQuality = SessionQuality & { tool_calls?: number };

export const emptyQuality = (): StoredQuality => ({
  tool_calls: 0,
  turn_ids: [],
  voice_to_voice_ms: [],
  turns: 0,
  interruptions: 0,
  frames: 0,
  frame_seconds: 0,
  providers: null,
});

/** `quality` with one more turn in it, or null when that turn is already in it (a redelivery). */
export function foldTurn(quality: StoredQuality | null, report: TurnMetricsReport): StoredQuality | null {
  const base = { ...emptyQuality(), ...quality };
  if (base.turn_ids.includes(report.turn_id)) return null;
  const answered = report.reply && report.voice_to_voice_ms !== null;
  return {
    turn_ids: [...base.turn_ids, report.turn_id].slice(-MAX_TURN_IDS),
    voice_to_voice_ms: answered
      ? [...base.voice_to_voice_ms, Math.round(report.voice_to_voice_ms!)].slice(-MAX_SAMPLES)
      : base.voice_to_voice_ms,
    turns: base.turns + (report.reply ? 1 : 0),
    interruptions: base.interruptions + (report.interrupted ? 1 : 0),
    frames: base.frames + (report.video?.frames ?? 0),
    frame_seconds: base.frame_seconds + (report.video?.seconds ?? 0),
    providers: report.providers,
    tool_calls: (base.tool_calls ?? 0) + (report.tool_calls?.length ?? 0),
  };
}

/**
 * Folds one report into the session's row under a row lock, so concurrent reports of one
 * session each see the last one's result. True when it counted (false: already counted).
 */
export async function recordTurnMetrics(db: Database, sessionId: string, report: TurnMetricsReport): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ quality: sessions.quality })
      .from(sessions)
      .where(eq(sessions.id, sessionId))
      .for('update');
    const folded = row ? foldTurn(row.quality, report) : null;
    if (!folded) return false;
    await tx.update(sessions).set({ quality: folded }).where(eq(sessions.id, sessionId));
    return true;
  });
}

/** All offline, all cloud, or some of each: a bounded label however many plugins there are. */
export function providerSet(providers: TurnMetricsReport['providers']): ProviderSet {
  const offline = [providers.stt, providers.llm, providers.tts].filter((name) => name === 'offline').length;
  return offline === 3 ? 'offline' : offline === 0 ? 'cloud' : 'mixed';
}

/** Moves the turn histograms; called once per counted report, so a redelivery is not observed twice. */
export function observeTurn(report: TurnMetricsReport): void {
  const set = providerSet(report.providers);
  if (report.reply && report.voice_to_voice_ms !== null)
    voiceToVoiceSeconds.observe({ provider_set: set }, report.voice_to_voice_ms / 1000);
  const stages = {
    stt: report.stages.stt_ms,
    eou: report.stages.eou_ms,
    llm: report.stages.llm_ttft_ms,
    tts: report.stages.tts_ttfb_ms,
  };
  for (const [stage, ms] of Object.entries(stages)) if (ms !== null) turnStageSeconds.observe({ stage }, ms / 1000);
  if (report.interrupted) turnInterruptions.inc({ provider_set: set });
  if (report.video && report.video.seconds >= MIN_FPS_SECONDS)
    deliveredFps.observe(report.video.frames / report.video.seconds);
  for (const call of report.tool_calls ?? []) {
    toolCalls.inc({ outcome: call.outcome });
    toolCallSeconds.observe({ outcome: call.outcome }, call.duration_ms / 1000);
  }
}

/** The nearest-rank percentile (a value that occurred), null without samples. */
export function percentile(samples: readonly number[], p: number): number | null {
  if (!samples.length) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** GET /v1/sessions/{id}'s `metrics`, as its schema says. */
export type SessionMetrics = (typeof SessionMetricsSchema)['static'];

/** What the visitor experienced, from a session row; null where nothing was measured. */
export function sessionMetrics(row: {
  joinedAt: Date | null;
  streamingStartedAt: Date | null;
  quality: StoredQuality | null;
}): SessionMetrics {
  const quality = { ...emptyQuality(), ...row.quality };
  // As the first-frame histogram counts it: 0 when the avatar was there before the visitor.
  const firstFrame =
    row.joinedAt && row.streamingStartedAt
      ? Math.max(0, row.streamingStartedAt.getTime() - row.joinedAt.getTime())
      : null;
  return {
    first_frame_ms: firstFrame,
    voice_to_voice_ms: {
      p50: percentile(quality.voice_to_voice_ms, 50),
      p95: percentile(quality.voice_to_voice_ms, 95),
    },
    fps:
      quality.frame_seconds >= MIN_FPS_SECONDS ? Math.round((quality.frames / quality.frame_seconds) * 10) / 10 : null,
    turns: quality.turns,
    interruptions: quality.interruptions,
    tool_calls: quality.tool_calls ?? 0,
    providers: {
      stt: quality.providers?.stt ?? null,
      llm: quality.providers?.llm ?? null,
      tts: quality.providers?.tts ?? null,
    },
  };
}
