// The agent's half of the configuration: the worker's capacity and health, the voice agent's
// providers and turn-taking, the hosted avatars, and which of the control plane's secrets its
// job processes must not get. Read by the worker and each job process; src/config.ts
// re-exports it (the one module both processes read settings from).
import { availableParallelism, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { AVATAR_VIDEO_CODECS, type AvatarVideoCodec } from '../contract/avatar-video.ts';
import { type Env, integer, list, oneOfValues, withoutTrailingSlash } from './environment.ts';

/** The agent worker (the jobs that render avatars and run the voice agent). */
export interface AgentSettings {
  /**
   * Sessions one worker runs at once; at that many it tells LiveKit it is full. Default:
   * AGENT_JOBS_PER_CORE per CPU core with cloud providers (8 on 2 cores: what bench/renderer
   * measured holding 25 fps), OFFLINE_AGENT_JOBS_PER_CORE with offline models (3), rounded down.
   */
  maxJobs: number;
  /**
   * Extra avatar pipelines for the jobs: module paths, comma-separated, each default-exporting
   * an `AvatarPipeline` (agent/pipelines) or a list of them. Built-in pipelines need none.
   */
  pipelineModules: string[];
  /**
   * Where the worker answers /healthz and /readyz for an orchestrator (AGENT_HEALTH_PORT, every
   * interface). Unset: nowhere (the process's own health is its heartbeats).
   */
  healthPort: number | undefined;
  /**
   * On SIGTERM the worker takes no new sessions and gives the running ones this long to end
   * (AGENT_DRAIN_SECONDS); then they move to another worker, or end with a
   * `service_restarting` notice where none has room.
   */
  drainSeconds: number;
  /**
   * The codec of the built-in avatar's video (AVATAR_VIDEO_CODEC, src/contract/avatar-video.ts):
   * `h264` by default, `vp8` for visitors whose browsers lack H.264.
   */
  avatarVideoCodec: AvatarVideoCodec;
}

/** A cloud provider's account: its key and, for self-hosted or test servers, its address. */
export interface CloudProvider {
  apiKey: string;
  /** Unset: the provider's public API. */
  baseUrl: string | undefined;
  model: string;
}

/**
 * Where the voice agent's speech-to-text, language model and text-to-speech come from. Each
 * is cloud when its key is set, otherwise the offline model the bootstrap installed.
 */
export interface ProviderSettings {
  /** Deepgram speech-to-text (DEEPGRAM_API_KEY). */
  deepgram: CloudProvider | undefined;
  /** Any OpenAI-compatible chat API (OPENAI_API_KEY, or OPENAI_BASE_URL alone for a keyless Ollama/vLLM). */
  openai: CloudProvider | undefined;
  /** ElevenLabs text-to-speech and instant voice cloning (ELEVENLABS_API_KEY). */
  elevenlabs: CloudProvider | undefined;
  /** Where the bootstrap put the offline models (Whisper, Qwen2.5-Coder-0.5B, SmolLM2-135M, Piper). */
  modelsDir: string;
  turns: TurnSettings;
}

/** `model`: LiveKit's v1-mini (local, hears prosody); `vad`: silence alone; `transcript`: silence, held when the words end mid-phrase (in English, as SmolLM2 reads them). */
export const TURN_DETECTIONS = ['model', 'vad', 'transcript'] as const;
export type TurnDetection = (typeof TURN_DETECTIONS)[number];

/** How the agent decides that the visitor finished speaking, and lets them interrupt. */
export interface TurnSettings {
  detection: TurnDetection;
  /** Silence after speech before a turn may end (ms). */
  minEndpointingDelayMs: number;
  /** Longest wait while the visitor seems not done (ms). */
  maxEndpointingDelayMs: number;
  /** Speech the visitor must keep up to interrupt the agent (ms). */
  minInterruptionMs: number;
}

/**
 * The control plane's secrets, read from the environment: agent job processes (forked by the
 * worker, running third-party plugins and the model) get an environment without them
 * (agent/worker.ts; agents' fork is patched to leave out what LIKENESS_JOB_ENV_EXCLUDE names).
 */
export const CONTROL_PLANE_SECRETS = [
  'DATABASE_URL',
  'TEST_DATABASE_URL',
  'S3_ACCESS_KEY_ID',
  'S3_SECRET_ACCESS_KEY',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'ADMIN_TOKEN',
  'METRICS_TOKEN',
] as const;
/** The variable agents' patched fork reads the names to leave out of a job's environment from. */
export const JOB_ENV_EXCLUDE_VARIABLE = 'LIKENESS_JOB_ENV_EXCLUDE';
/**
 * Set by the worker (to "1") once its first job processes are warm: a process forked after it
 * (replacing one whose session ended) loads its offline models behind its first session's face
 * rather than before taking a job (agent/job.ts).
 */
export const JOB_MODELS_IN_BACKGROUND_VARIABLE = 'LIKENESS_JOB_MODELS_IN_BACKGROUND';

/** A hosted avatar provider's key and API (undefined: wherever its plugin goes by default). */
export type HostedAvatar<Url extends string | undefined = string | undefined> = { apiKey: string; apiUrl: Url };
/**
 * Hosted avatars, each a pipeline once its key is set: LemonSlice (LEMONSLICE_API_KEY), Anam
 * (ANAM_API_KEY), Beyond Presence (BEY_API_KEY); `<NAME>_API_URL` points at another server.
 */
export type HostedAvatarSettings = {
  lemonslice?: HostedAvatar;
  anam?: HostedAvatar<string>;
  bey?: HostedAvatar<string>;
};
const hostedAvatar = <Url extends string | undefined>(
  apiKey: string | undefined,
  apiUrl: Url,
): HostedAvatar<Url> | undefined => (apiKey ? { apiKey, apiUrl } : undefined);
export const loadHostedAvatars = (env: Env = process.env): HostedAvatarSettings => ({
  lemonslice: hostedAvatar(env.LEMONSLICE_API_KEY, env.LEMONSLICE_API_URL || undefined),
  anam: hostedAvatar(env.ANAM_API_KEY, env.ANAM_API_URL || 'https://api.anam.ai'),
  bey: hostedAvatar(env.BEY_API_KEY, env.BEY_API_URL || 'https://api.bey.dev'),
});

/** The model cache the bootstrap fills (LIKENESS_CACHE_DIR, default ~/.cache/likeness). */
export function cacheDir(env: Env = process.env): string {
  return resolve(env.LIKENESS_CACHE_DIR || join(env.HOME || homedir(), '.cache', 'likeness'));
}

export function loadProviders(env: Env = process.env): ProviderSettings {
  const cloud = (key: string | undefined, baseUrl: string | undefined, model: string): CloudProvider | undefined =>
    key ? { apiKey: key, baseUrl: baseUrl ? withoutTrailingSlash(baseUrl) : undefined, model } : undefined;
  return {
    deepgram: cloud(env.DEEPGRAM_API_KEY, env.DEEPGRAM_BASE_URL, env.DEEPGRAM_MODEL || 'nova-3'),
    // A self-hosted OpenAI-compatible server often needs no key.
    openai: cloud(
      env.OPENAI_API_KEY || (env.OPENAI_BASE_URL ? 'none' : undefined),
      env.OPENAI_BASE_URL,
      env.LLM_MODEL || 'gpt-4o-mini',
    ),
    elevenlabs: cloud(env.ELEVENLABS_API_KEY, env.ELEVENLABS_BASE_URL, env.ELEVENLABS_MODEL || 'eleven_flash_v2_5'),
    modelsDir: resolve(env.LIKENESS_MODELS_DIR || join(cacheDir(env), 'models')),
    turns: {
      detection: oneOfValues(env, 'AGENT_TURN_DETECTION', TURN_DETECTIONS, 'transcript'),
      minEndpointingDelayMs: integer(env, 'AGENT_MIN_ENDPOINTING_MS', 500),
      maxEndpointingDelayMs: integer(env, 'AGENT_MAX_ENDPOINTING_MS', 3000),
      minInterruptionMs: integer(env, 'AGENT_MIN_INTERRUPTION_MS', 300),
    },
  };
}

/**
 * Avatar sessions per core a worker takes by default when the voice agent runs on cloud
 * providers (speech-to-text, model and voice all keyed). bench/renderer on a 2-core machine
 * (2026-12-04 06:00, H.264, the voice quiet between replies, the visitor's voice read in 20 ms
 * frames, visitors in a process of their own on the same cores, each avatar speaking about
 * half the time): 8 sessions hold ≥ 24 fps at every visitor in two runs of two, 9 in one;
 * each job takes ~14–20 % of a core (the JS thread ~7–10 %: the talking head, frames handed to
 * rtc-node, the agent; the H.264 encoder ~3 %; Opus ~1 % while it speaks).
 */
export const AGENT_JOBS_PER_CORE = 4;
/**
 * With any offline model in the job (Whisper, the local model, Piper run on the same cores and
 * a job process holds ~1.1 GB), the earlier, safer share: 3 sessions on 2 cores.
 */
export const OFFLINE_AGENT_JOBS_PER_CORE = 1.5;

/** AGENT_MAX_JOBS's default: the share above for this environment's providers, per core, at least 1. */
function defaultMaxJobs(env: Env): number {
  const providers = loadProviders(env);
  const cloud = providers.deepgram && providers.openai && providers.elevenlabs;
  return Math.max(1, Math.floor((cloud ? AGENT_JOBS_PER_CORE : OFFLINE_AGENT_JOBS_PER_CORE) * availableParallelism()));
}

/** The name the agent worker registers under and sessions dispatch to (AGENT_NAME). */
export const DEFAULT_AGENT_NAME = 'likeness-agent';

/** Read by the worker (its capacity) and by each job process (its extra pipelines). */
export function loadAgentSettings(env: Env = process.env): AgentSettings {
  return {
    maxJobs: integer(env, 'AGENT_MAX_JOBS', defaultMaxJobs(env), 1),
    pipelineModules: list(env.AGENT_PIPELINE_MODULES),
    healthPort: env.AGENT_HEALTH_PORT ? integer(env, 'AGENT_HEALTH_PORT', 0, 1) : undefined,
    drainSeconds: integer(env, 'AGENT_DRAIN_SECONDS', 30),
    avatarVideoCodec: oneOfValues(env, 'AVATAR_VIDEO_CODEC', AVATAR_VIDEO_CODECS, 'h264'),
  };
}
