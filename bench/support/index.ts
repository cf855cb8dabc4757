// What every bench script shares: a service (and, when asked, its agent worker) on a fresh
// data folder that is removed afterwards, an account on it (account.ts), the wire fakes at
// fixed latencies, and one way to print p50/p95.
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentLogger } from '../../agent/logging.ts';
import { type AgentLogLevel, type AgentWorker, startAgentWorker } from '../../agent/worker.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { configureLogging } from '../../src/logging/index.ts';
import { type RunningService, startService } from '../../src/server.ts';
import { type ProviderFakes, startProviderFakes } from '../../test/support/fakes/index.ts';

export { type BenchAccount, benchAccount, createBenchAccount } from './account.ts';

export interface BenchService {
  service: RunningService;
  config: Config;
  worker: AgentWorker | undefined;
  stop(): Promise<void>;
}

export interface BenchServiceOptions {
  /** An agent worker in this process too. */
  agent?: boolean;
  env?: Record<string, string>;
}

/** The service on loopback with embedded defaults (PGlite, local assets, local LiveKit), plus `env`. */
export async function startBenchService({ agent = false, env = {} }: BenchServiceOptions = {}): Promise<BenchService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'likeness-bench-'));
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  // The service and the worker log at the bench's level (warn): an access line per request drowned its figures.
  const logLevel = (process.env.BENCH_LOG_LEVEL ?? 'warn') as AgentLogLevel;
  // One account fills the worker: admission's fair share (a slot kept for other accounts) is off.
  // Benches hold quiet visitors for minutes: no idle question speaks into their figures.
  const config = loadConfig({
    ...process.env,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    SESSION_ADMISSION: agent ? 'workers' : 'off',
    SESSION_RESERVED_PERCENT: '0',
    SESSION_IDLE_TIMEOUT_SECONDS: '0',
    LOG_LEVEL: logLevel,
    ...env,
  });
  configureLogging(config.log);
  const service = await startService(config);
  const { livekit } = service.services;
  const worker = agent
    ? await startAgentWorker({
        wsURL: livekit.url,
        apiKey: livekit.apiKey,
        apiSecret: livekit.apiSecret,
        agentName: config.livekit.agentName,
        controlPlaneUrl: service.url,
        logLevel,
      })
    : undefined;
  return {
    service,
    config,
    worker,
    async stop() {
      await worker?.stop();
      await service.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One line: label, count, p50 and p95 in milliseconds. */
export function report(label: string, samples: number[], { width = 40, digits = 1 } = {}): void {
  const sorted = [...samples].sort((a, b) => a - b);
  if (sorted.length === 0) {
    console.log(`${label.padEnd(width)} n=0    (skipped)`);
    return;
  }
  console.log(
    `${label.padEnd(width)} n=${String(samples.length).padEnd(4)} p50=${percentile(sorted, 50).toFixed(digits)} ms  p95=${percentile(sorted, 95).toFixed(digits)} ms`,
  );
}

/** Where the voice of 48 kHz speech starts and ends (sample indices), inside the silence espeak-ng and Piper add around it. */
export function voiceBounds(samples: Int16Array): { start: number; end: number } {
  const loud = (i: number) => Math.abs(samples[i]!) >= 300;
  let end = samples.length;
  while (end > 0 && !loud(end - 1)) end--;
  let start = 0;
  while (start < end && !loud(start)) start++;
  return { start, end };
}

/** Milliseconds of near-silence at the end of 48 kHz speech: where a phrase's voice ends, before the trailing silence. */
export function trailingSilenceMs(samples: Int16Array): number {
  return ((samples.length - voiceBounds(samples).end) / 48_000) * 1000;
}

/** inference.VAD's default minSilenceDuration (agents 1.9): silence before it calls the speech over. */
export const VAD_SILENCE_MS = 250;
/** The wire fakes' own time per turn in the conversation benches: Deepgram's final, the first token, the first audio. */
export const FAKE_LATENCY = { deepgramFinalMs: 100, firstTokenMs: 150, firstAudioMs: 100 };

/** The cloud providers' wire fakes at FAKE_LATENCY, the model streaming a token every 20 ms. */
export async function startLatencyFakes(): Promise<ProviderFakes> {
  const fakes = await startProviderFakes();
  fakes.deepgram.finalDelayMs = FAKE_LATENCY.deepgramFinalMs;
  fakes.openai.firstTokenDelayMs = FAKE_LATENCY.firstTokenMs;
  fakes.openai.tokenIntervalMs = 20;
  fakes.elevenlabs.firstAudioDelayMs = FAKE_LATENCY.firstAudioMs;
  return fakes;
}

/** A logger that drops every line: the offline model benches print their own figures. */
export const silentLogger: AgentLogger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silentLogger };

/** CPU time of every core so far: busy and total (os.cpus' counters, milliseconds). */
export function machineBusy(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const { times } of cpus()) {
    busy += times.user + times.nice + times.sys + times.irq;
    total += times.user + times.nice + times.sys + times.irq + times.idle;
  }
  return { busy, total };
}

/** Waits (at most a minute) until both cores were less than a third busy over a second. */
export async function settled(): Promise<void> {
  for (const deadline = performance.now() + 60_000; performance.now() < deadline; ) {
    const before = machineBusy();
    await Bun.sleep(1_000);
    if (busyShare(before, machineBusy()) < 1 / 3) return;
  }
}

export function busyShare(before: { busy: number; total: number }, after: { busy: number; total: number }): number {
  return (after.busy - before.busy) / Math.max(1, after.total - before.total);
}
