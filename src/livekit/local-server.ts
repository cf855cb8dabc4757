// The embedded default's LiveKit: a single-node livekit-server (no Redis, no TURN) that
// this process starts, keeps running and stops. Its signalling and API listen on loopback
// (`port`; clients reach them through the service's /rtc, signal-proxy.ts); its WebRTC media
// use a UDP range, and ICE over TCP, on `nodeIp`: the host's network address, or 127.0.0.1
// to keep everything on this machine.
//
// Credentials persist in `dataDir/credentials.json`, so a restart of the service (or of
// the server) keeps issued tokens and webhook signatures valid. The config it writes is
// `dataDir/livekit.yaml`; both files are mode 0600.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import {
  CONFIG_FILE,
  type Credentials,
  configYaml,
  loadCredentials,
  type ServerConfig,
  writePrivate,
} from './local-files.ts';
import { freeTcpPort, freeUdpRange } from './local-ports.ts';

export interface LocalLivekitServerOptions {
  /** The livekit-server binary (see `livekitBinary()`). */
  binary: string;
  /** Holds credentials.json and livekit.yaml; created if missing. */
  dataDir: string;
  host?: '127.0.0.1';
  /** Signalling and API port; 0 or unset picks a free one. */
  port?: number;
  /** The address media go to (ICE candidates); default 127.0.0.1, loopback only. */
  nodeIp?: string;
  /** The UDP ports for media; unset: a free run of `rtcPorts` on the node's address. */
  udpPorts?: { start: number; end: number };
  /** Where LiveKit posts room and participant events, signed with this server's key. */
  webhookUrl?: string;
  /** host:port of a Redis: this server becomes one node of a cluster sharing it. */
  redis?: string;
  /** The API key and secret to use instead of dataDir's own (every node of a cluster shares one). */
  credentials?: Credentials;
  /** Serve Prometheus metrics on this port. */
  prometheusPort?: number;
  /** How the cluster picks the node of a new room. */
  nodeSelector?: ServerConfig['nodeSelector'];
  /** Size of the UDP port range for WebRTC media (one port per peer connection); default 50. */
  rtcPorts?: number;
  /**
   * ICE over TCP: `true` on a free port, or this port; off by default on loopback, where UDP
   * always works (livekit-server binds that listener on every interface whatever
   * `bind_addresses` says).
   */
  iceTcp?: boolean | number;
  /** How long a (re)start may take to answer its health check; default 30 s. */
  startTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL; default 5 s. */
  stopTimeoutMs?: number;
  /** Progress and the server's own output; default: stderr with a `[livekit]` prefix. */
  log?: (line: string) => void;
}

const RESTART_DELAYS_MS = [250, 500, 1_000, 2_000, 5_000];
const OUTPUT_TAIL_CHARS = 8_192;
const SETTLE_MS = 200;
/** Environment variables livekit-server reads as config overrides (LIVEKIT_PORT, LIVEKIT_CONFIG, NODE_IP, …). */
const SERVER_ENV = /^(LIVEKIT_.*|NODE_IP|UDP_PORT|REDIS_HOST|REDIS_PASSWORD)$/;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Launches that use one config path, in turn: each holds it from writing the file until
 * its server has read it (answers), so two servers on one folder never swap configs.
 */
const configLocks = new Map<string, Promise<void>>();

async function withConfigLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  const previous = configLocks.get(path) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => mine);
  configLocks.set(path, tail);
  await previous;
  try {
    return await work();
  } finally {
    release();
    if (configLocks.get(path) === tail) configLocks.delete(path);
  }
}

function defaultLog(line: string) {
  process.stderr.write(`[livekit] ${line}\n`);
}

/**
 * setpriv's parent-death signal kills the server even if this process is SIGKILLed (Linux), and
 * setsid puts it in a session of its own: a signal to this process's group (Ctrl-C in the
 * terminal, a supervisor's SIGTERM to the group) does not reach it, so it does not die under
 * the sessions still draining and is not taken for crashed and restarted during the stop;
 * stop() ends it once the rest has stopped.
 */
function launcher(): string[] {
  if (process.platform !== 'linux') return [];
  const setpriv = Bun.which('setpriv');
  const setsid = Bun.which('setsid');
  return [...(setpriv ? [setpriv, '--pdeathsig', 'SIGKILL', '--'] : []), ...(setsid ? [setsid] : [])];
}

export class LocalLivekitServer {
  /** ws://127.0.0.1:<port>, for SDKs and clients on this machine. */
  readonly url: string;
  readonly apiKey: string;
  readonly apiSecret: string;
  readonly configPath: string;

  private child: Subprocess<'ignore', 'pipe', 'pipe'> | null = null;
  private supervising = false;
  private stopping: Promise<void> | null = null;
  private restartTimer: ReturnType<typeof setTimeout> | null = null;
  private failedRestarts = 0;
  private restartCount = 0;
  private outputTail = '';
  private readonly healthUrl: string;
  private readonly configText: string;
  private readonly command: string[];
  private readonly env: Record<string, string>;
  private readonly log: (line: string) => void;
  private readonly killOnExit = () => this.child?.kill('SIGKILL');

  private constructor(
    private readonly options: LocalLivekitServerOptions,
    config: ServerConfig,
    configPath: string,
  ) {
    this.url = `ws://${config.host}:${config.port}`;
    this.healthUrl = `http://${config.host}:${config.port}/`;
    this.apiKey = config.apiKey;
    this.apiSecret = config.apiSecret;
    this.configPath = configPath;
    this.configText = configYaml(config);
    this.log = options.log ?? defaultLog;
    this.command = [...launcher(), options.binary, '--config', configPath];
    this.env = Object.fromEntries(
      Object.entries(process.env).filter(
        (entry): entry is [string, string] => entry[1] !== undefined && !SERVER_ENV.test(entry[0]),
      ),
    );
  }

  /** Writes the config, starts the server and resolves once it answers its health check. */
  static async start(options: LocalLivekitServerOptions): Promise<LocalLivekitServer> {
    const host = options.host ?? '127.0.0.1';
    if (host !== '127.0.0.1') throw new Error('the local LiveKit server listens on 127.0.0.1 only');
    if (!(await Bun.file(options.binary).exists())) {
      throw new Error(`no LiveKit server binary at ${options.binary} (npm start / npm test build it)`);
    }
    await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
    const credentials = options.credentials ?? (await loadCredentials(options.dataDir));
    const nodeIp = options.nodeIp ?? host;
    for (let attempt = 1; ; attempt++) {
      const port = options.port || (await freeTcpPort(host));
      const range = options.udpPorts ?? (await freeUdpRange(nodeIp, options.rtcPorts ?? 50));
      const tcpPort =
        typeof options.iceTcp === 'number' ? options.iceTcp : options.iceTcp ? await freeTcpPort(host) : 0;
      const config: ServerConfig = {
        ...credentials,
        host,
        port,
        rtc: { nodeIp, ...range, tcpPort },
        webhookUrl: options.webhookUrl,
        redis: options.redis,
        prometheusPort: options.prometheusPort,
        nodeSelector: options.nodeSelector,
      };
      const server = new LocalLivekitServer(options, config, join(options.dataDir, CONFIG_FILE));
      process.on('exit', server.killOnExit);
      try {
        await server.launch();
        server.supervising = true;
        return server;
      } catch (error) {
        await server.stop();
        // A port picked here can be taken by someone else before the server binds it.
        const raced = !options.port || options.iceTcp === true;
        if (!raced || attempt >= 3 || !/address already in use/.test((error as Error).message)) throw error;
      }
    }
  }

  /** The server's current process id (undefined between a crash and its restart). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How many times the server was restarted after dying unexpectedly. */
  get restarts(): number {
    return this.restartCount;
  }

  /** Stops restarting, then ends the server: SIGTERM, again (LiveKit's "force") half-way, SIGKILL at the timeout. */
  stop(): Promise<void> {
    this.stopping ??= this.terminate();
    return this.stopping;
  }

  private async terminate() {
    this.supervising = false;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const timeout = this.options.stopTimeoutMs ?? 5_000;
      const exited = child.exited.then(() => true);
      child.kill('SIGTERM'); // the first waits for participants to leave
      if (!(await Promise.race([exited, sleep(timeout / 2).then(() => false)]))) {
        child.kill('SIGTERM'); // the second does not
        if (!(await Promise.race([exited, sleep(timeout / 2).then(() => false)]))) {
          this.log(`LiveKit server (pid ${child.pid}) ignored SIGTERM for ${timeout} ms: killing it`);
          child.kill('SIGKILL');
          await child.exited;
        }
      }
    }
    this.child = null;
    process.off('exit', this.killOnExit);
  }

  /** (Re)writes the config, spawns the server and waits for its health check; kills it if that never comes. */
  private launch() {
    return withConfigLock(this.configPath, () => this.launchUnlocked());
  }

  private async launchUnlocked() {
    // Rewritten at every launch: a restart keeps this server's ports even if another
    // start on the same folder wrote its own.
    await writePrivate(this.configPath, this.configText);
    if (this.stopping !== null) throw new Error('LiveKit server stopped during start');
    this.outputTail = '';
    const child = Bun.spawn(this.command, {
      cwd: this.options.dataDir,
      env: this.env,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    this.child = child;
    // The server alone does not keep this process alive; when it exits, killOnExit ends the server.
    child.unref();
    const drained = Promise.all([this.forward(child.stdout), this.forward(child.stderr)]);
    void child.exited.then(() => this.exited(child));

    const deadline = Date.now() + (this.options.startTimeoutMs ?? 30_000);
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        await Promise.race([drained, sleep(500)]); // its last words
        throw new Error(
          `LiveKit server exited during start (${this.describeExit(child)}): ${this.outputTail.trim() || 'no output'}`,
        );
      }
      if (this.stopping !== null) throw new Error('LiveKit server stopped during start');
      if (await this.answersHealthy()) {
        // livekit-server answers before it counts itself running (100 ms later), and a
        // SIGTERM before that is ignored: let it get there, so stop() works at once.
        await sleep(SETTLE_MS);
        return;
      }
      await sleep(100);
    }
    child.kill('SIGKILL');
    throw new Error(
      `LiveKit server did not answer ${this.healthUrl} within its start timeout: ${this.outputTail.trim() || 'no output'}`,
    );
  }

  private async answersHealthy(): Promise<boolean> {
    try {
      const response = await fetch(this.healthUrl, { signal: AbortSignal.timeout(1_000) });
      return response.status === 200 && (await response.text()).trim() === 'OK';
    } catch {
      return false;
    }
  }

  private describeExit(child: Subprocess) {
    return child.signalCode ? `signal ${child.signalCode}` : `code ${child.exitCode}`;
  }

  /** A process ended: restart it with a backoff unless it was stopped on purpose. */
  private exited(child: Subprocess) {
    if (child !== this.child) return;
    this.child = null;
    if (!this.supervising || this.stopping !== null) return;
    this.scheduleRestart(`LiveKit server (pid ${child.pid}) exited unexpectedly (${this.describeExit(child)})`);
  }

  private scheduleRestart(reason: string) {
    // The backoff grows while restarts die before answering, and resets once one does.
    const delay = RESTART_DELAYS_MS[Math.min(this.failedRestarts, RESTART_DELAYS_MS.length - 1)]!;
    this.failedRestarts++;
    this.log(`${reason}; restarting in ${delay} ms`);
    this.restartTimer = setTimeout(() => void this.restart(), delay);
  }

  private async restart() {
    this.restartTimer = null;
    if (!this.supervising || this.stopping !== null) return;
    try {
      await this.launch();
      this.failedRestarts = 0;
      this.restartCount++;
      this.log(`LiveKit server restarted (pid ${this.child?.pid}) at ${this.url}`);
    } catch (error) {
      if (!this.supervising || this.stopping !== null) return;
      const message = `LiveKit server restart failed: ${(error as Error).message}`;
      // A process that was spawned schedules the next try when it exits; one that never was cannot.
      if (!this.child && !this.restartTimer) this.scheduleRestart(message);
      else this.log(message);
    }
  }

  /** Passes the server's output on line by line, keeping a tail for error messages. */
  private async forward(stream: ReadableStream<Uint8Array>) {
    const decoder = new TextDecoder();
    let pending = '';
    const reader = stream.getReader();
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        const text = decoder.decode(read.value, { stream: true });
        this.outputTail = (this.outputTail + text).slice(-OUTPUT_TAIL_CHARS);
        pending += text;
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) if (line.trim()) this.log(line);
      }
    } catch {
      // the stream ends with the process
    }
    if (pending.trim()) this.log(pending);
  }
}
