// Settings of session recordings (docs/api.md#recordings, src/recordings): their price, how long
// the service keeps them, how long it waits for a lost job's last chunks.
import { type Env, integer } from './environment.ts';

export interface RecordingSettings {
  /** CREDITS_PER_RECORDED_MINUTE (2): charged per started minute of a recorded session, beside its avatar minutes; test keys record free. */
  creditsPerMinute: number;
  /** RECORDING_RETENTION_DAYS (30): recordings in the service's store are deleted after this (0 keeps them); an account may set its own. */
  retentionDays: number;
  /**
   * RECORDING_FINISH_WAIT_SECONDS (30): after a session ends, how long its recording waits for
   * a job's last chunks and its `done` before the parts received are joined without them (a job
   * whose worker died never sends them).
   */
  finishWaitSeconds: number;
  /** RECORDING_SWEEP_INTERVAL_SECONDS (10): how often recordings due to be joined or deleted are looked for. */
  sweepIntervalSeconds: number;
}

export function loadRecordingSettings(env: Env): RecordingSettings {
  return {
    creditsPerMinute: integer(env, 'CREDITS_PER_RECORDED_MINUTE', 2, 0),
    retentionDays: integer(env, 'RECORDING_RETENTION_DAYS', 30, 0),
    finishWaitSeconds: integer(env, 'RECORDING_FINISH_WAIT_SECONDS', 30, 1),
    sweepIntervalSeconds: integer(env, 'RECORDING_SWEEP_INTERVAL_SECONDS', 10, 1),
  };
}
