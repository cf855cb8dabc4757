// The LiveKit Agents worker, run inside the service process: it registers with the LiveKit
// server for explicit dispatch under one agent name and forks a process per job, which runs
// agent/job.ts. It is started programmatically, never through the agents CLI.

import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { AgentServer, initializeLogger, ServerOptions } from '@livekit/agents';
import { AccessToken, RoomServiceClient } from 'livekit-server-sdk';
import { CONTROL_PLANE_SECRETS, loadAgentSettings, loadProviders } from '../src/config.ts';
import {
  HEARTBEAT_INTERVAL_SECONDS,
  HEARTBEAT_PATH,
  HEARTBEAT_TTL_SECONDS,
  type WorkerHeartbeat,
} from '../src/contract/index.ts';
import {
  announceAvailable,
  launchingJobs,
  registerInferenceRunner,
  setJobProcessEnvironment,
  warmProcesses,
  whenRegistered,
} from './agents-adapter/index.ts';
import { jobOfferAnswerer } from './job-offers.ts';
import { type AgentLogger, agentLog } from './logging.ts';
import { readsSentencesInInferenceProcess } from './providers/index.ts';
import { SENTENCE_END_INFERENCE } from './providers/offline/sentence-end-runner.ts';

/** The file each forked job process imports; the worker needs it as an absolute path. */
export const JOB_ENTRY = join(import.meta.dir, 'job.ts');

/**
 * How long a job may take to leave its room and deliver its last reports once told to stop,
 * before its process is killed: its conversation's close (≤ 5 s), summary, outcome and memory
 * (≤ 30 s each, agent/conversation/) included; LiveKit ending a job whose room was deleted too.
 * A job leaves as soon as it is done: this is the bound, not the wait.
 */
const JOB_SHUTDOWN_TIMEOUT_MS = 100_000;
const JOB_INITIALIZE_TIMEOUT_MS = 60_000;
// The agents' advisory memory warning: a warm process with the offline models holds ~1.1 GB
// at rest, and their 1,000 MB default warned of each.
const JOB_MEMORY_WARN_MB = 2_048;

export type AgentLogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

export interface AgentWorkerOptions {
  /** The LiveKit server, `ws://…` or `http://…`. */
  wsURL: string;
  apiKey: string;
  apiSecret: string;
  /** Jobs are taken only when dispatched to this name (explicit dispatch). */
  agentName: string;
  /**
   * The worker's health endpoint (`GET /` answers 200 while registered, `GET /worker` its
   * details). Unset: a free port is picked, so several workers and the API never clash.
   */
  healthPort?: number;
  /** Where the health endpoint listens; loopback unless an orchestrator probes it from outside. */
  healthHost?: string;
  /**
   * Sessions this worker runs at once; at that many it tells LiveKit it is full. Default:
   * AGENT_MAX_JOBS (src/config/agent.ts: 4 per core with cloud providers, 1.5 offline).
   */
  maxConcurrentJobs?: number;
  /** The worker's and its jobs' log level (JSON lines on stdout); quiet by default. */
  logLevel?: AgentLogLevel;
  /**
   * The control plane (INTERNAL_URL) this worker reports its capacity and running sessions to,
   * every HEARTBEAT_INTERVAL_SECONDS, so that it admits only sessions some worker can take.
   * Unset: no heartbeats (a control plane with SESSION_ADMISSION=off).
   */
  controlPlaneUrl?: string;
  /** Called if the worker dies after it registered (the LiveKit server stayed unreachable). */
  onFailure?: (error: Error) => void;
}

export interface AgentWorker {
  /** Random per start; the heartbeats carry it. */
  id: string;
  healthUrl: string;
  /** Sessions it takes at once. */
  capacity: number;
  /** Job processes initialised and waiting for a session; `capacity` of them once the worker is warm. */
  warmProcesses(): number;
  /**
   * True once a job process was warm for every slot: a session since waits for no process to
   * load. It stays true through bursts that take the warm processes (replacements load behind).
   */
  warmedUp(): boolean;
  /** Sessions it runs now. */
  runningSessions(): number;
  /** True from the first stop() on (draining, then closing). */
  stopping(): boolean;
  /**
   * Stops taking jobs and stops the worker. Running jobs are given `drainTimeoutMs` (default
   * 0) to end on their own, then told to shut down: they leave their rooms and deliver their
   * last reports.
   */
  stop(options?: { drainTimeoutMs?: number }): Promise<void>;
}

/** The module agents' inference process loads for SENTENCE_END_INFERENCE. */
const SENTENCE_END_RUNNER = new URL('./providers/offline/sentence-end-runner.ts', import.meta.url).href;

/** Resolves once the worker is registered with the LiveKit server and can be dispatched to. */
export async function startAgentWorker(options: AgentWorkerOptions): Promise<AgentWorker> {
  const logLevel = options.logLevel ?? 'warn';
  // The worker sends these logger options to every job process it forks.
  initializeLogger({ pretty: false, level: logLevel });
  const healthHost = options.healthHost ?? '127.0.0.1';
  const healthPort = options.healthPort ?? (await freePort(healthHost));
  const maxConcurrentJobs = options.maxConcurrentJobs ?? loadAgentSettings(process.env).maxJobs;
  // Job processes run third-party plugins and models: they get no database URL, storage
  // secret or admin token, even when this process (`--role all`) holds them.
  setJobProcessEnvironment({ excluded: CONTROL_PLANE_SECRETS });
  if (!(maxConcurrentJobs >= 1)) throw new Error(`maxConcurrentJobs must be at least 1, got ${maxConcurrentJobs}`);
  const rooms = new RoomServiceClient(options.wsURL.replace(/^ws/, 'http'), options.apiKey, options.apiSecret, {
    requestTimeout: 5,
  });
  const takenSessions = () => sessionsTakenBy(server);
  const answerOffer = jobOfferAnswerer({ rooms, capacity: maxConcurrentJobs, taken: () => takenSessions().length });
  const serverOptions = serverOptionsFor(options, { healthHost, healthPort, maxConcurrentJobs, logLevel, answerOffer });
  if (readsSentencesInInferenceProcess(loadProviders(process.env)))
    registerInferenceRunner(SENTENCE_END_INFERENCE, SENTENCE_END_RUNNER);
  const server = new AgentServer(serverOptions);

  let stopping = false;
  const { running } = await runUntilRegistered(server);
  // Random per start: a restarted worker is a new one, and the old one's row simply expires.
  const workerId = `${options.agentName}-${randomBytes(8).toString('hex')}`;
  const logger = agentLog().child({ worker_id: workerId });
  const freedSlots = announceFreedSlots(server, maxConcurrentJobs, () => stopping);
  const heartbeats = options.controlPlaneUrl
    ? startHeartbeats({
        ...options,
        workerId,
        controlPlaneUrl: options.controlPlaneUrl,
        capacity: maxConcurrentJobs,
        logger,
        // LiveKit hears of a freed slot before the control plane, which then admits a session
        // into it: that session's dispatch must not find the worker still "not available".
        runningSessions: () => {
          freedSlots.check();
          return takenSessions();
        },
        draining: () => stopping,
      })
    : undefined;
  await heartbeats?.beat();
  running.catch((error: unknown) => {
    if (stopping) return;
    const failure = error instanceof Error ? error : new Error(String(error));
    if (options.onFailure) options.onFailure(failure);
    else logger.error({ err: failure }, 'the agent worker stopped');
  });

  let stopped: Promise<void> | undefined;
  const warmUp = watchWarmUp(server, maxConcurrentJobs);
  return {
    id: workerId,
    healthUrl: `http://${healthHost.includes(':') ? `[${healthHost}]` : healthHost}:${healthPort}`,
    capacity: maxConcurrentJobs,
    // agents keeps them in a private pool (agents-adapter P6).
    warmProcesses: () => warmProcesses(server),
    warmedUp: warmUp.done,
    runningSessions: () => server.activeJobs.length,
    stopping: () => stopping,
    stop({ drainTimeoutMs = 0 } = {}) {
      stopped ??= (async () => {
        stopping = true;
        warmUp.stop();
        freedSlots.stop();
        // Draining from now: the control plane sends no more sessions this way, and the
        // heartbeats go on listing the running ones, which are not lost while they drain.
        await heartbeats?.beat();
        // drain() without a timeout would wait for every session to end on its own.
        if (drainTimeoutMs > 0) await server.drain(drainTimeoutMs).catch(() => undefined);
        // The jobs still running are told to stop: each tells the control plane it leaves.
        await server.close();
        await heartbeats?.beat();
        heartbeats?.stop();
      })();
      return stopped;
    },
  };
}

/**
 * The sessions a worker runs or has accepted: a job waits for its assignment and for a
 * process (seconds, when none was warm) before it runs. The heartbeats list both, or the
 * control plane would take a waiting session for unanswered and send it to a second agent.
 */
function sessionsTakenBy(server: AgentServer): string[] {
  return [
    ...new Set(
      [...server.activeJobs.map((job) => job.job), ...launchingJobs(server)].map((job) => job.room?.name ?? job.id),
    ),
  ];
}

/** Runs the worker; resolves (with its run) once LiveKit has registered it, or closes it and throws. */
async function runUntilRegistered(server: AgentServer): Promise<{ running: Promise<void> }> {
  const registered = whenRegistered(server);
  const running = server.run();
  try {
    await Promise.race([
      registered,
      running.then(() => {
        throw new Error('the agent worker stopped before it registered');
      }),
    ]);
  } catch (error) {
    await server.close();
    throw error;
  }
  // Wrapped: an async function returning the run itself would wait for it to end.
  return { running };
}

/**
 * Once a process was warm for every slot (readiness waits for that), processes forked to
 * replace ended sessions take a job before their offline models are loaded: three sessions
 * ending together left three processes loading at once for ~10 s on two cores, and a visitor
 * arriving then waited for one with a blank room. Now the face comes first, the voice when
 * the models are in (the processes forked from then on are told so). Watched until then, as
 * readiness probes may never ask.
 */
function watchWarmUp(server: AgentServer, maxConcurrentJobs: number): { done(): boolean; stop(): void } {
  let warmedUp = false;
  setJobProcessEnvironment({ modelsInBackground: false });
  const done = (): boolean => {
    if (warmedUp || warmProcesses(server) < maxConcurrentJobs) return warmedUp;
    warmedUp = true;
    setJobProcessEnvironment({ modelsInBackground: true });
    clearInterval(watch);
    return true;
  };
  const watch = setInterval(done, 250);
  watch.unref();
  return { done, stop: () => clearInterval(watch) };
}

/** agents' options for this worker: its name, its health port, its capacity and how jobs are offered and run. */
function serverOptionsFor(
  options: AgentWorkerOptions,
  {
    healthHost,
    healthPort,
    maxConcurrentJobs,
    logLevel,
    answerOffer,
  }: {
    healthHost: string;
    healthPort: number;
    maxConcurrentJobs: number;
    logLevel: string;
    answerOffer: ReturnType<typeof jobOfferAnswerer>;
  },
): ServerOptions {
  const serverOptions = new ServerOptions({
    agent: JOB_ENTRY,
    agentName: options.agentName,
    wsURL: options.wsURL,
    apiKey: options.apiKey,
    apiSecret: options.apiSecret,
    host: healthHost,
    port: healthPort,
    // The load LiveKit balances on. The agents default is the whole machine's CPU use, and
    // LiveKit gives no job to a worker reporting 1.0: on a box busy with the server, the
    // database and the media, sessions would get no agent. Running jobs against a capacity
    // is what this worker can actually take.
    loadFunc: async (server) => Math.min(1, server.activeJobs.length / maxConcurrentJobs),
    loadThreshold: 1,
    // Job processes are forked and initialised ahead of dispatches (loading the offline models
    // takes seconds), one for each slot the running jobs leave free (agents' pool, patched: its
    // idle count covers the running processes too; agents-adapter P4). A burst that fills the
    // worker finds every process ready, and forks no spare while its sessions start.
    numIdleProcesses: maxConcurrentJobs,
    // Rooms that are gone and a full worker are refused (agent/job-offers.ts).
    requestFunc: async (request) => {
      if ((await answerOffer(request.room?.name)) === 'reject') return request.reject();
      await request.accept();
    },
    // A job process loads the offline models in prewarm (4–8 s on an idle 2-core machine):
    // under load the agents' 10 s default killed every process before it was ready, and
    // sessions got no agent at all.
    initializeProcessTimeout: JOB_INITIALIZE_TIMEOUT_MS,
    shutdownProcessTimeout: JOB_SHUTDOWN_TIMEOUT_MS,
    jobMemoryWarnMB: JOB_MEMORY_WARN_MB,
    logLevel,
    // The agents' production flag only changes defaults (health port 8081, idle processes
    // per core, a CPU threshold), and every one of them is set here.
    production: false,
  });
  if (serverOptions.agentName !== options.agentName) {
    // LIVEKIT_AGENT_NAME_OVERRIDE (set by `lk simulate`) silently replaces the name given here.
    throw new Error(
      `the agent name was overridden to "${serverOptions.agentName}" by LIVEKIT_AGENT_NAME_OVERRIDE; unset it`,
    );
  }
  return serverOptions;
}

/**
 * LiveKit hears a worker's load only every 2.5 s (agents' interval), and a dispatch it gets in
 * between for a worker it last heard full fails ("worker not available"), and is sent again by
 * the control plane 2 s later. This tells LiveKit at once when a full worker frees a slot; it
 * only adds the full → available message (never while stopping), agents' own loop goes on.
 */
function announceFreedSlots(
  server: AgentServer,
  capacity: number,
  stopping: () => boolean,
): { check(): void; stop(): void } {
  let lastRunning = 0;
  const check = () => {
    const running = server.activeJobs.length;
    if (!stopping() && lastRunning >= capacity && running < capacity) announceAvailable(server, running / capacity);
    lastRunning = running;
  };
  const timer = setInterval(check, 100);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}

/** Posts the worker's heartbeat (src/contract/worker-heartbeat.ts) now and every interval. */
function startHeartbeats(options: {
  workerId: string;
  controlPlaneUrl: string;
  agentName: string;
  apiKey: string;
  apiSecret: string;
  capacity: number;
  runningSessions(): string[];
  draining(): boolean;
  logger: AgentLogger;
}): { beat(): Promise<void>; stop(): void } {
  const { workerId } = options;
  const url = `${options.controlPlaneUrl.replace(/\/+$/, '')}${HEARTBEAT_PATH}`;
  let warned = false;
  const beat = async () => {
    const sessions = options.runningSessions();
    const heartbeat: WorkerHeartbeat = {
      worker_id: workerId,
      agent_name: options.agentName,
      capacity: options.capacity,
      sessions,
      draining: options.draining(),
    };
    // Signed with the LiveKit key and secret the control plane holds too; it names the worker.
    const token = await new AccessToken(options.apiKey, options.apiSecret, { identity: workerId, ttl: 60 }).toJwt();
    const answer = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(heartbeat),
      // As long as a beat still counts: a slow answer is no failure (beats are idempotent).
      signal: AbortSignal.timeout(HEARTBEAT_TTL_SECONDS * 1000),
    }).catch((error: unknown) => error as Error);
    const failed = answer instanceof Error ? answer.message : answer.ok ? undefined : `HTTP ${answer.status}`;
    // Once per outage: the control plane may be restarting.
    if (failed && !warned)
      options.logger.warn(
        { url, failure: failed },
        "the agent worker's heartbeat failed; sessions may be refused until it gets through",
      );
    warned = Boolean(failed);
    await (answer instanceof Response ? answer.arrayBuffer().catch(() => undefined) : undefined);
  };
  const timer = setInterval(() => void beat(), HEARTBEAT_INTERVAL_SECONDS * 1000);
  timer.unref();
  return { beat, stop: () => clearInterval(timer) };
}

/**
 * A port free right now on `host`; agents' health server binds it a moment later. Picked at
 * random below the kernel's ephemeral range: asked for port 0, Linux hands successive askers the
 * same port, and two workers starting together (or an outgoing connection taking the port in
 * between) left the second one's bind to fail, which ended its process before it registered.
 */
async function freePort(host: string): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = HEALTH_PORT_SPAN.min + Math.floor(Math.random() * (HEALTH_PORT_SPAN.max - HEALTH_PORT_SPAN.min));
    if (await tcpPortFree(host, port)) return port;
  }
  throw new Error('could not find a free port for the agent health endpoint');
}

/** Below Linux's default ephemeral range (32768–60999), which port 0 and outgoing connections use. */
const HEALTH_PORT_SPAN = { min: 20_000, max: 32_000 };

async function tcpPortFree(host: string, port: number): Promise<boolean> {
  const probe = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => resolve(true));
  });
  if (bound) await new Promise<void>((resolve) => probe.close(() => resolve()));
  return bound;
}
