// Each agent turn's quality, reported to the control plane once the turn is in the chat
// history (a `turn_metrics` job report, docs/api.md#session-metrics): voice-to-voice as the
// agent session measured it, the stage latencies, whether the visitor cut it off, the
// providers, the frames the avatar published since the previous report, and the tools called
// and passages retrieved for it. Keyed by the turn's id, so a report delivered twice counts once.
import type { llm, metrics } from '@livekit/agents';
import type { ToolCallOutcome, TurnMetricsReport } from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import { type Reporter, ReportSender } from '../reports/index.ts';

/** The id of the report close() sends (no turn of agents has it). */
export const CLOSING_TURN_ID = 'closing';
/** A turn's report lists at most this many calls (the contract's bound). */
const MAX_TOOL_CALLS = 20;

/** agents' seconds as whole ms; null where it did not measure (or measured nonsense). */
function ms(seconds: number | undefined): number | null {
  return seconds === undefined || !Number.isFinite(seconds) ? null : Math.max(0, Math.round(seconds * 1000));
}

/** A drawn face's frames published while someone watched it, and for how long (its delivered fps). */
export interface VideoTally {
  frames: number;
  watchedMs: number;
}

export interface TurnQualityOptions {
  reporter: Reporter<TurnMetricsReport>;
  providers: TurnMetricsReport['providers'];
  /** The face's frames so far, as a watcher got them; absent when the job draws no face. */
  videoTally?: () => VideoTally;
  logger: Pick<AgentLogger, 'warn'>;
}

export class TurnQuality {
  readonly #options: TurnQualityOptions;
  readonly #sender: ReportSender<TurnMetricsReport>;
  /** The visitor's last turn, not answered yet: its metrics hold the end of speech, transcript and end-of-turn delays. */
  #question: llm.MetricsReport | null = null;
  /** The tally at the previous report. */
  #tally: VideoTally;
  #reported = false;
  /** Tool calls since the last agent turn: the next one (the reply using their results) reports them. */
  #toolCalls: NonNullable<TurnMetricsReport['tool_calls']> = [];

  constructor(options: TurnQualityOptions) {
    this.#options = options;
    this.#sender = new ReportSender(options.reporter, (report) =>
      options.logger.warn({ turn_id: report.turn_id }, "an agent turn's metrics could not be delivered"),
    );
    this.#tally = options.videoTally?.() ?? { frames: 0, watchedMs: 0 };
  }

  visitorTurn(metrics: llm.MetricsReport): void {
    this.#question = metrics;
  }

  /** A tool call of the turn being answered (tools.ts). */
  toolCall(call: { name: string; outcome: ToolCallOutcome; duration_ms: number }): void {
    if (this.#toolCalls.length < MAX_TOOL_CALLS) this.#toolCalls.push({ ...call });
  }

  /**
   * An agent turn, spoken or cut off: reported with the visitor's turn it answers, if any, the
   * tools called since the last agent turn, and how long its passages took (knowledge.ts).
   */
  agentTurn(turn: { id: string; interrupted: boolean; metrics: llm.MetricsReport; retrievalMs?: number }): void {
    const question = this.#question;
    this.#question = null;
    const stages = {
      stt_ms: ms(question?.transcriptionDelay),
      eou_ms: ms(question?.endOfTurnDelay),
      llm_ttft_ms: ms(turn.metrics.llmNodeTtft),
      tts_ttfb_ms: ms(turn.metrics.ttsNodeTtfb),
    };
    // agents measures it directly (end of the visitor's speech → our first audio out); the
    // sum of the stages is the usual estimate where it could not.
    const estimate =
      stages.eou_ms !== null && stages.llm_ttft_ms !== null && stages.tts_ttfb_ms !== null
        ? stages.eou_ms + stages.llm_ttft_ms + stages.tts_ttfb_ms
        : null;
    const report: TurnMetricsReport = {
      type: 'turn_metrics',
      turn_id: turn.id,
      reply: question !== null,
      voice_to_voice_ms: question ? (ms(turn.metrics.e2eLatency) ?? estimate) : null,
      stages,
      interrupted: turn.interrupted,
      ...(this.#toolCalls.length ? { tool_calls: this.#toolCalls } : {}),
      ...(turn.retrievalMs !== undefined ? { retrieval_ms: turn.retrievalMs } : {}),
      providers: this.#options.providers,
      video: this.#video(),
    };
    this.#toolCalls = [];
    this.#send(report);
  }

  /**
   * At shutdown: reports what no turn did yet (the providers of a session closed during its
   * greeting; the frames published since the last turn), then waits for every report still
   * on its way.
   */
  async close(): Promise<void> {
    const unreported = this.#options.videoTally && this.#options.videoTally().frames > this.#tally.frames;
    if (!this.#reported || unreported) {
      const stages = { stt_ms: null, eou_ms: null, llm_ttft_ms: null, tts_ttfb_ms: null };
      this.#send({
        type: 'turn_metrics',
        turn_id: CLOSING_TURN_ID,
        reply: false,
        voice_to_voice_ms: null,
        stages,
        interrupted: false,
        providers: this.#options.providers,
        video: this.#video(),
      });
    }
    await this.#sender.close();
  }

  #send(report: TurnMetricsReport): void {
    this.#reported = true;
    this.#sender.send(report);
  }

  /** Frames published since the previous report, and over how long someone watched. */
  #video(): TurnMetricsReport['video'] {
    const read = this.#options.videoTally;
    if (!read) return null;
    const tally = read();
    const video = {
      frames: tally.frames - this.#tally.frames,
      seconds: Math.round(tally.watchedMs - this.#tally.watchedMs) / 1000,
    };
    this.#tally = tally;
    return video;
  }
}

/**
 * The stages of a turn's latency worth a log line, as its fields (`stage`, epoch ms `at`, whole
 * ms); null for the rest (VAD counters and the like).
 */
export function turnMetricsFields(m: metrics.AgentMetrics): Record<string, string | number | boolean> | null {
  const at = Math.round(m.timestamp);
  switch (m.type) {
    case 'eou_metrics':
      return {
        stage: 'eou',
        at,
        end_of_utterance_ms: Math.round(m.endOfUtteranceDelayMs),
        transcription_ms: Math.round(m.transcriptionDelayMs),
        last_speaking: Math.round(m.lastSpeakingTimeMs),
      };
    case 'stt_metrics':
      return { stage: 'stt', at, duration_ms: Math.round(m.durationMs), audio_ms: Math.round(m.audioDurationMs) };
    case 'llm_metrics':
      return {
        stage: 'llm',
        at,
        ttft_ms: Math.round(m.ttftMs),
        duration_ms: Math.round(m.durationMs),
        tokens: m.completionTokens,
        cancelled: m.cancelled,
      };
    case 'tts_metrics':
      return {
        stage: 'tts',
        at,
        ttfb_ms: Math.round(m.ttfbMs),
        duration_ms: Math.round(m.durationMs),
        audio_ms: Math.round(m.audioDurationMs),
        cancelled: m.cancelled,
      };
    default:
      return null;
  }
}
