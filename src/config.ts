// Every setting of the service, read once from the environment. The defaults are the
// embedded mode: one process, PGlite under DATA_DIR, assets in a local folder.
import { resolve } from 'node:path';
import {
  type AgentSettings,
  DEFAULT_AGENT_NAME,
  type HostedAvatarSettings,
  loadAgentSettings,
  loadHostedAvatars,
  loadProviders,
  type ProviderSettings,
} from './config/agent.ts';
import { type Env, flag, integer, list, oneOfValues, withoutTrailingSlash } from './config/environment.ts';
import {
  type KnowledgeSettings,
  loadKnowledgeSettings,
  loadToolSettings,
  type ToolSettings,
} from './config/knowledge.ts';
import {
  type LocalMediaSettings,
  loadLocalMedia,
  loadTls,
  type TlsSettings,
  websocketUrlOf,
} from './config/network.ts';
import { loadRecordingSettings, type RecordingSettings } from './config/recordings.ts';
import { loadTrainingUpgradeSettings, type TrainingUpgradeSettings } from './config/training-upgrades.ts';
import { BUILTIN_PIPELINE_ID } from './contract/pipelines.ts';
import { IDLE_TIMEOUT_MAX_SECONDS } from './contract/session-direction.ts';

export * from './config/agent.ts';
export * from './config/knowledge.ts';
export * from './config/network.ts';
export * from './config/recordings.ts';
export * from './config/training-upgrades.ts';

export interface S3Settings {
  bucket: string;
  endpoint?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Key prefix inside the bucket, so one bucket can serve several deployments. */
  prefix: string;
}

export interface LivekitSettings {
  /** Server API address (http(s) or ws(s)); unset: the service starts a local LiveKit server. */
  url: string | undefined;
  apiKey: string | undefined;
  apiSecret: string | undefined;
  /**
   * The `rtc_url` handed to clients (LIVEKIT_PUBLIC_URL). Unset: PUBLIC_URL as ws(s), whose
   * /rtc this service passes on to its LiveKit (the local one or `url`); when everything stays
   * on loopback without a PUBLIC_URL, LiveKit's own address.
   */
  publicUrl: string | undefined;
  /** Name the agent worker registers under; sessions dispatch it explicitly. */
  agentName: string;
  /** How the local server (embedded default) is reached for media; unused with `url`. */
  media: LocalMediaSettings;
}

export interface SessionSettings {
  /** A session nobody joins ends after this long (never billed). */
  joinTimeoutSeconds: number;
  /**
   * SESSION_REJOIN_SECONDS: how long a session waits for a visitor who left to come back (a
   * reloaded page, a network that needed a new connection) before it ends `client_left`; 0 ends
   * it at once. Nothing is billed meanwhile.
   */
  rejoinSeconds: number;
  /** A session whose agent job has not reached the room by then ends as `agent_unavailable`. */
  agentTimeoutSeconds: number;
  /**
   * SESSION_IDLE_TIMEOUT_SECONDS: a session's `idle_timeout_seconds` when its start sets none: a
   * visitor silent this long is asked whether they are still there, and the session ends `idle`
   * after as long again; 0 never (at most IDLE_TIMEOUT_MAX_SECONDS).
   */
  idleTimeoutSeconds: number;
  /**
   * `workers` (SESSION_ADMISSION, default): a start answers 503 while no live agent worker has
   * a free slot (workers report theirs in heartbeats). `off`: every start opens a room, for
   * agent workers that do not report (another implementation), and tests without workers.
   */
  admission: 'workers' | 'off';
  /**
   * SESSION_RESERVED_PERCENT: the share of the agent workers' slots (rounded up) kept, once
   * that few are free, for accounts that run no session (admission's fair share). 0: none kept,
   * for a service with one account.
   */
  reservedPercent: number;
  /** Default maximum length of a session; accounts may have their own. */
  maxDurationSeconds: number;
  /** SESSION_TEST_MAX_DURATION_SECONDS: a test key's sessions end after this, whatever the account's maximum (docs/api.md#test-mode). */
  testMaxDurationSeconds: number;
  /** Length of a billed "minute" (tests shorten it). */
  billingIntervalSeconds: number;
  /** How often the service looks for sessions past their deadlines. */
  sweepIntervalSeconds: number;
  /** Lifetime of the client's room token: long enough to join, short if it leaks. */
  tokenTtlSeconds: number;
  /**
   * Whether `form_factor: desktop` gets landscape avatar video (960×540 with the built-in
   * pipeline). Off: every session is portrait (540×960), the shape also used when the client
   * does not say.
   */
  landscapeVideo: boolean;
  /**
   * VISITOR_MEMORY_DAYS: a visitor (docs/api.md#visitors) with no session for this long is
   * forgotten, facts and all, by the sweep; 0 keeps them until DELETE.
   */
  visitorMemoryDays: number;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['json', 'pretty'] as const;

export interface Config {
  host: string;
  port: number;
  /** `{base_url}` of docs/api.md: where clients reach this service. */
  publicUrl: string;
  /** Where agent jobs reach this control plane (they run in other processes, maybe other hosts). */
  internalUrl: string;
  /** `{assets_url}` of docs/api.md#assets: where stored images and audio are served from. */
  assetsUrl: string;
  /** The HTTPS listener beside the plain one (src/tls); undefined: none. */
  tls: TlsSettings | undefined;
  /** A signed asset link's shortest life (ASSET_URL_TTL, seconds): links are made afresh on every read. */
  assetUrlTtlSeconds: number;
  dataDir: string;
  /** Unset: embedded PGlite under dataDir. */
  databaseUrl: string | undefined;
  /** Unset: a local folder under dataDir. */
  s3: S3Settings | undefined;
  credits: {
    /** One-time charge for onboarding an identity. */
    onboardingCost: number;
    /** Charged per started minute while an avatar streams. */
    perAvatarMinute: number;
  };
  /** Shared secret for /internal/admin (the operator CLI while the service runs). Unset: generated into dataDir. */
  adminToken: string | undefined;
  /** LOG_LEVEL (info) and LOG_FORMAT: JSON lines, or readable ones (the default on a terminal). */
  log: { level: (typeof LOG_LEVELS)[number]; format: (typeof LOG_FORMATS)[number] };
  /** Bearer token Prometheus scrapes GET /metrics with (the admin token works too). Unset: the admin token only. */
  metricsToken: string | undefined;
  /** Maximum accepted request body; larger requests answer 413 before they are read. */
  maxRequestBytes: number;
  /**
   * Every route's handler is compiled at start (PRECOMPILE_ROUTES, the default), so the first
   * requests are as fast as the later ones; off, each is compiled at its first request (~0.5 s of
   * CPU less per start: the test suites' hundreds of in-process services).
   */
  precompileRoutes: boolean;
  /**
   * A pause of the API process's event loop longer than this is logged with the requests it
   * held, and counted on /metrics (EVENT_LOOP_STALL_MS; 0: not watched).
   */
  eventLoopStallMs: number;
  /**
   * With a shared Postgres, unfinished creates and retrains older than this are taken to be
   * orphaned by a dead process (the embedded database has one process, so it sweeps at once).
   */
  recoveryGraceSeconds: number;
  /**
   * A create or retrain in progress is leased to the process doing it, renewed every third of
   * this; once a lease runs out (its process died) any process finishes the work: a retrain
   * resumes, a create is removed (WORK_LEASE_SECONDS).
   */
  workLeaseSeconds: number;
  livekit: LivekitSettings;
  pipelines: PipelineSettings;
  sessions: SessionSettings;
  console: ConsoleSettings;
  /** Every account's limits unless the operator set its own (`likeness limits set`); 0: none. */
  limits: AccountLimits;
  providers: ProviderSettings;
  agent: AgentSettings;
  webhooks: WebhookSettings;
  tools: ToolSettings;
  knowledge: KnowledgeSettings;
  /** Identities trained by an older version of their pipeline's training, trained again in the background. */
  trainingUpgrades: TrainingUpgradeSettings;
  recordings: RecordingSettings;
}

/** Customer webhooks (src/webhooks, docs/api.md#webhooks). */
export interface WebhookSettings {
  /**
   * Let endpoints point at private, loopback and link-local addresses (WEBHOOKS_ALLOW_PRIVATE):
   * off by default, so a customer cannot make the service call into its own network.
   */
  allowPrivate: boolean;
  /**
   * Waits before each retry, seconds (WEBHOOKS_RETRY_SECONDS): Standard Webhooks' schedule,
   * 5 s up to 10 h, about a day in all; after the last the delivery is marked failed.
   */
  retrySeconds: number[];
  /** How long a receiver may take to answer (WEBHOOKS_TIMEOUT_SECONDS). */
  timeoutSeconds: number;
  /** How often each API process looks for due deliveries (WEBHOOKS_POLL_MS); an event sent by this process goes at once. */
  pollMs: number;
  /** Endpoints one account may have. */
  maxEndpointsPerAccount: number;
  /** Delivered and failed deliveries are kept this long for GET …/deliveries, then deleted (WEBHOOKS_RETENTION_DAYS). */
  retentionDays: number;
}

export const DEFAULT_WEBHOOK_RETRY_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600];

/** What one account may do at once and per window (src/limits); 0: no limit. */
export interface AccountLimits {
  /** Sessions running at once (with or without an avatar, joined or not). */
  concurrent_sessions: number;
  session_starts_per_minute: number;
  /** Identity creates and retrains training at once. */
  concurrent_identity_creates: number;
  /** Identity creates and retrains per hour, failed ones included. */
  identity_creates_per_hour: number;
}

/** The control plane's half of the avatar pipelines (training); the agent's half is AgentSettings.pipelineModules. */
export interface PipelineSettings {
  /**
   * Extra pipelines: module paths, comma-separated, each default-exporting a `Pipeline`
   * (src/pipelines) or a list of them. A module that cannot be loaded stops the start.
   */
  modules: string[];
  /** The pipeline an identity created without `pipeline_id` gets. */
  defaultId: string;
  /** Hosted avatars offered as pipelines (their keys). */
  hosted: HostedAvatarSettings;
}

export interface ConsoleSettings {
  /**
   * SIGNUP (on by default): anyone may create an account in the console. `off`: the sign-up
   * route answers 403 and accounts are made by the operator (`likeness accounts create`).
   */
  signUp: boolean;
  /** Credits granted to an account created by signing up in the console. */
  starterCredits: number;
  /** How long a console sign-in lasts. */
  sessionHours: number;
  /** Failed sign-ins allowed per email, and per client address (×4), within the window. */
  signInFailuresAllowed: number;
  signInWindowSeconds: number;
  /** New console accounts per client address per hour (each gets the starter credits). */
  signUpsPerHour: number;
  /**
   * Proxies whose `X-Forwarded-For` is believed (addresses or CIDRs, TRUSTED_PROXIES): behind
   * one, the client address the throttles count is the last one it forwarded, not its own.
   */
  trustedProxies: string[];
  /**
   * LIMIT_IPV6_PREFIX (64): the per-address limits (sign-up, sign-in, the embed's per visitor)
   * count an IPv6 client by its network of this many bits; IPv4 by its address.
   */
  limitIpv6Prefix: number;
  /** The console's own origin (PUBLIC_URL's): sign-in and sign-up from any other page are refused. */
  origin: string;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the configuration table: one line per setting with its default in sight, all in one place
export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080);
  const host = env.HOST || '0.0.0.0';
  const media = loadLocalMedia(env, host);
  const providers = loadProviders(env);
  // Where clients reach this service: by default the address the media go to, so a browser
  // on another machine of the network gets URLs it can open.
  const publicUrl = withoutTrailingSlash(
    env.PUBLIC_URL || `http://${media.nodeIp === '127.0.0.1' ? 'localhost' : media.nodeIp}:${port}`,
  );
  const dataDir = resolve(env.DATA_DIR || './data');
  const assetUrlTtlSeconds = integer(env, 'ASSET_URL_TTL', 3600, 60);
  const s3: S3Settings | undefined = env.S3_BUCKET
    ? {
        bucket: env.S3_BUCKET,
        endpoint: env.S3_ENDPOINT || undefined,
        region: env.S3_REGION || undefined,
        accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
        secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
        prefix: env.S3_PREFIX ?? '',
      }
    : undefined;
  return {
    host,
    port,
    publicUrl,
    internalUrl: withoutTrailingSlash(env.INTERNAL_URL || `http://127.0.0.1:${port}`),
    assetsUrl: withoutTrailingSlash(env.ASSETS_URL || `${publicUrl}/assets`),
    assetUrlTtlSeconds,
    tls: loadTls(env, host),
    dataDir,
    databaseUrl: env.DATABASE_URL || undefined,
    s3,
    credits: {
      onboardingCost: integer(env, 'CREDITS_ONBOARDING', 50),
      perAvatarMinute: integer(env, 'CREDITS_PER_AVATAR_MINUTE', 10),
    },
    adminToken: env.ADMIN_TOKEN || undefined,
    metricsToken: env.METRICS_TOKEN || undefined,
    log: {
      level: oneOfValues(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
      format: oneOfValues(env, 'LOG_FORMAT', LOG_FORMATS, process.stdout.isTTY ? 'pretty' : 'json'),
    },
    maxRequestBytes: integer(env, 'MAX_REQUEST_BYTES', 40 * 1024 * 1024, 1024),
    precompileRoutes: flag(env, 'PRECOMPILE_ROUTES', true),
    eventLoopStallMs: integer(env, 'EVENT_LOOP_STALL_MS', 250, 0),
    recoveryGraceSeconds: integer(env, 'RECOVERY_GRACE_SECONDS', 900),
    workLeaseSeconds: integer(env, 'WORK_LEASE_SECONDS', 30, 3),
    livekit: {
      url: env.LIVEKIT_URL || undefined,
      apiKey: env.LIVEKIT_API_KEY || undefined,
      apiSecret: env.LIVEKIT_API_SECRET || undefined,
      // Clients reach LiveKit through this service's /rtc, whichever LiveKit it is, unless
      // everything stays on loopback without a PUBLIC_URL (then LiveKit's own address).
      publicUrl:
        env.LIVEKIT_PUBLIC_URL ||
        (env.PUBLIC_URL || media.nodeIp !== '127.0.0.1' ? websocketUrlOf(publicUrl) : undefined),
      agentName: env.AGENT_NAME || DEFAULT_AGENT_NAME,
      media,
    },
    pipelines: {
      modules: list(env.PIPELINE_MODULES),
      defaultId: env.PIPELINE_DEFAULT || BUILTIN_PIPELINE_ID,
      hosted: loadHostedAvatars(env),
    },
    sessions: {
      joinTimeoutSeconds: integer(env, 'SESSION_JOIN_TIMEOUT_SECONDS', 60, 1),
      rejoinSeconds: integer(env, 'SESSION_REJOIN_SECONDS', 10, 0),
      agentTimeoutSeconds: integer(env, 'SESSION_AGENT_TIMEOUT_SECONDS', 60, 1),
      idleTimeoutSeconds: Math.min(integer(env, 'SESSION_IDLE_TIMEOUT_SECONDS', 90, 0), IDLE_TIMEOUT_MAX_SECONDS),
      admission: oneOfValues(env, 'SESSION_ADMISSION', ['workers', 'off'] as const, 'workers'),
      reservedPercent: Math.min(integer(env, 'SESSION_RESERVED_PERCENT', 20, 0), 90),
      maxDurationSeconds: integer(env, 'SESSION_MAX_DURATION_SECONDS', 30 * 60, 1),
      testMaxDurationSeconds: integer(env, 'SESSION_TEST_MAX_DURATION_SECONDS', 3 * 60, 1),
      billingIntervalSeconds: integer(env, 'BILLING_INTERVAL_SECONDS', 60, 1),
      sweepIntervalSeconds: integer(env, 'SESSION_SWEEP_INTERVAL_SECONDS', 5, 1),
      tokenTtlSeconds: integer(env, 'SESSION_TOKEN_TTL_SECONDS', 600, 30),
      landscapeVideo: flag(env, 'AVATAR_LANDSCAPE', true),
      visitorMemoryDays: integer(env, 'VISITOR_MEMORY_DAYS', 365, 0),
    },
    limits: {
      concurrent_sessions: integer(env, 'LIMIT_CONCURRENT_SESSIONS', 10, 0),
      session_starts_per_minute: integer(env, 'LIMIT_SESSION_STARTS_PER_MINUTE', 20, 0),
      concurrent_identity_creates: integer(env, 'LIMIT_CONCURRENT_IDENTITY_CREATES', 3, 0),
      identity_creates_per_hour: integer(env, 'LIMIT_IDENTITY_CREATES_PER_HOUR', 60, 0),
    },
    console: {
      signUp: flag(env, 'SIGNUP', true),
      starterCredits: integer(env, 'CONSOLE_STARTER_CREDITS', 500),
      sessionHours: integer(env, 'CONSOLE_SESSION_HOURS', 24 * 7, 1),
      signInFailuresAllowed: integer(env, 'CONSOLE_SIGNIN_FAILURES', 5, 1),
      signInWindowSeconds: integer(env, 'CONSOLE_SIGNIN_WINDOW_SECONDS', 15 * 60, 1),
      signUpsPerHour: integer(env, 'CONSOLE_SIGNUPS_PER_HOUR', 5, 1),
      trustedProxies: list(env.TRUSTED_PROXIES),
      limitIpv6Prefix: ipv6Prefix(env),
      origin: new URL(publicUrl).origin,
    },
    providers,
    tools: loadToolSettings(env),
    knowledge: loadKnowledgeSettings(env, providers.openai, providers.modelsDir),
    agent: loadAgentSettings(env),
    trainingUpgrades: loadTrainingUpgradeSettings(env, assetUrlTtlSeconds),
    recordings: loadRecordingSettings(env),
    webhooks: {
      allowPrivate: flag(env, 'WEBHOOKS_ALLOW_PRIVATE', false),
      retrySeconds: secondsList(env, 'WEBHOOKS_RETRY_SECONDS') ?? DEFAULT_WEBHOOK_RETRY_SECONDS,
      timeoutSeconds: integer(env, 'WEBHOOKS_TIMEOUT_SECONDS', 10, 1),
      pollMs: integer(env, 'WEBHOOKS_POLL_MS', 1000, 50),
      maxEndpointsPerAccount: integer(env, 'WEBHOOKS_MAX_PER_ACCOUNT', 20, 1),
      retentionDays: integer(env, 'WEBHOOKS_RETENTION_DAYS', 30, 1),
    },
  };
}

/** A comma-separated list of whole seconds (each ≥ 0), e.g. `5,300,1800`. */
function secondsList(env: Env, name: string): number[] | undefined {
  const items = list(env[name]);
  if (items.length === 0) return undefined;
  const values = items.map(Number);
  if (!values.every((v) => Number.isInteger(v) && v >= 0))
    throw new Error(`${name} must be whole seconds separated by commas, got "${env[name]}"`);
  return values;
}

/** LIMIT_IPV6_PREFIX: a network's length in bits, 1–128 (128: each address on its own). */
function ipv6Prefix(env: Env): number {
  const bits = integer(env, 'LIMIT_IPV6_PREFIX', 64, 1);
  if (bits > 128) throw new Error(`LIMIT_IPV6_PREFIX must be an integer from 1 to 128, got "${env.LIMIT_IPV6_PREFIX}"`);
  return bits;
}
