// Settings of session recordings (docs/api.md#recordings, src/recordings): their price, how long
// the service keeps them, how long it waits for a lost job's last chunks, the key of accounts'
// own buckets' secrets.
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
  /**
   * RECORDING_STORAGE_KEY (unset): 32 bytes, base64 or hex, that encrypt the secrets of accounts'
   * own buckets at rest (AES-256-GCM). Unset: accounts cannot set a bucket of their own (PUT
   * /v1/recording-storage answers 503), and recordings of accounts that set one fail.
   */
  storageKey: Buffer | undefined;
}

/** 32 bytes written as 64 hex digits or as base64; anything else stops the start, naming the variable. */
function storageKey(env: Env): Buffer | undefined {
  const raw = env.RECORDING_STORAGE_KEY?.trim();
  if (!raw) return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(raw)
    ? Buffer.from(raw, 'hex')
    : /^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)
      ? Buffer.from(raw, 'base64')
      : undefined;
  if (key?.length !== 32)
    throw new Error('RECORDING_STORAGE_KEY must be 32 bytes, as 64 hex digits or as base64 (openssl rand -base64 32)');
  return key;
}

export function loadRecordingSettings(env: Env): RecordingSettings {
  return {
    creditsPerMinute: integer(env, 'CREDITS_PER_RECORDED_MINUTE', 2, 0),
    retentionDays: integer(env, 'RECORDING_RETENTION_DAYS', 30, 0),
    finishWaitSeconds: integer(env, 'RECORDING_FINISH_WAIT_SECONDS', 30, 1),
    sweepIntervalSeconds: integer(env, 'RECORDING_SWEEP_INTERVAL_SECONDS', 10, 1),
    storageKey: storageKey(env),
  };
}
