// The adapter to the LiveKit Agents framework (agent/agents-adapter/): the one place that reaches
// past the public API of @livekit/agents and its avatar plugins. It was written against the
// versions it names: a different one installed fails here, naming the adapter to review. No
// other code of agent/ reaches past their public API. And the patched process pool does what
// the adapter relies on (hunks P4–P6 and P8 in agent/agents-adapter/index.ts), shown on agents' own
// AgentServer with a job whose processes the test holds in prewarm. What the other workarounds
// do is shown where it matters (each names its test).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentServer, initializeLogger, ServerOptions } from '@livekit/agents';
import { AgentDispatchClient, RoomServiceClient } from 'livekit-server-sdk';
import {
  AGENTS_VERSION,
  launchingJobs,
  PLUGIN_VERSIONS,
  RTC_NODE_VERSION,
  warmProcesses,
  whenRegistered,
} from '../../agent/agents-adapter/index.ts';
import { httpUrlOf } from '../../src/livekit/connection.ts';
import { LocalLivekitServer, livekitBinary } from '../../src/livekit/index.ts';
import { freeTcpPort } from '../../src/livekit/local-ports.ts';
import { setProcessEnv } from '../support/environment.ts';
import { jobProcesses, tempDir } from '../support/processes.ts';
import { eventually } from '../support/visitor.ts';

const REPO = join(import.meta.dir, '../..');

/** The threads of agents' event-loop watchdog in a process (named "livekit-loop-monitor-job", cut to 15 bytes). */
function loopMonitorThreads(pid: number): number {
  return readdirSync(`/proc/${pid}/task`).filter((task) =>
    readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').startsWith('livekit-loop-mo'),
  ).length;
}

const installedVersion = (name: string) =>
  (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;

describe('the agents framework as installed', () => {
  test('@livekit/agents and the avatar plugins are the versions agent/agents-adapter was checked against', () => {
    const changed = Object.entries({
      '@livekit/agents': AGENTS_VERSION,
      '@livekit/rtc-node': RTC_NODE_VERSION,
      ...PLUGIN_VERSIONS,
    })
      .filter(([name, version]) => installedVersion(name) !== version)
      .map(
        ([name, version]) => `${name} ${installedVersion(name)} is installed, agent/agents-adapter was for ${version}`,
      );
    expect(
      changed.length === 0
        ? 'same'
        : `${changed.join('; ')}: review each function of agent/agents-adapter/ and each hunk of agent/patches (both listed in agent/agents-adapter/index.ts) against it, then update the versions there`,
    ).toBe('same');
  });

  test('no code of agent/ but the adapter reaches past their public API', async () => {
    /** What reaching past it looks like: agents' IPC and worker messages, private members, the patch's additions, the forked environment. */
    const reaches = [
      /'shutdownRequest'/,
      /'worker_msg'/,
      /'worker_registered'/,
      /\.startAgent\(/,
      /sessionHost/,
      /\b_activity\b/,
      /server\.(launchingJobs|warmProcesses)/,
      /process\.on\('message'/,
      /JOB_(ENV_EXCLUDE|MODELS_IN_BACKGROUND)_VARIABLE/,
      /userData as /,
      /@livekit\/agents[^'"]*\/dist\//,
    ];
    const found: string[] = [];
    for await (const file of new Bun.Glob('agent/**/*.ts').scan({ cwd: REPO })) {
      if (file.startsWith('agent/agents-adapter/')) continue;
      const text = await readFile(join(REPO, file), 'utf8');
      for (const reach of reaches) if (reach.test(text)) found.push(`${file}: ${reach}`);
    }
    expect(found).toEqual([]);
  });
});

describe("agents' process pool, as patched", () => {
  const AGENT_NAME = 'likeness-adapter-test';
  const dirs: string[] = [];
  let livekit: LocalLivekitServer;
  let server: AgentServer;
  let running: Promise<void> | undefined;
  let rooms: RoomServiceClient;
  let dispatches: AgentDispatchClient;
  let release = '';
  let restoreEnv = () => {};

  beforeAll(async () => {
    initializeLogger({ pretty: false, level: 'warn' });
    const dir = await tempDir(dirs, 'likeness-adapter-');
    livekit = await LocalLivekitServer.start({ binary: livekitBinary(), dataDir: dir, log: () => {} });
    rooms = new RoomServiceClient(httpUrlOf(livekit.url), livekit.apiKey, livekit.apiSecret);
    dispatches = new AgentDispatchClient(httpUrlOf(livekit.url), livekit.apiKey, livekit.apiSecret);
    // The job processes wait in prewarm until this file exists (test/agent/fixtures/held-job.ts).
    release = join(dir, 'release');
    restoreEnv = setProcessEnv({ HELD_JOB_RELEASE: release });
    server = new AgentServer(
      new ServerOptions({
        agent: join(import.meta.dir, 'fixtures/held-job.ts'),
        agentName: AGENT_NAME,
        wsURL: livekit.url,
        apiKey: livekit.apiKey,
        apiSecret: livekit.apiSecret,
        host: '127.0.0.1',
        port: await freeTcpPort('127.0.0.1'),
        // One slot, as agent/worker.ts sets it: the running job's process included.
        numIdleProcesses: 1,
        loadFunc: async () => 0,
        loadThreshold: 1,
        initializeProcessTimeout: 60_000,
        shutdownProcessTimeout: 5_000,
        logLevel: 'warn',
      }),
    );
    const registered = whenRegistered(server);
    running = server.run();
    await registered;
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await running?.catch(() => undefined);
    await livekit?.stop();
    restoreEnv();
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  }, 60_000);

  test('a job accepted while no process is warm waits as launching, then runs in the one slot; no spare is forked beside it', async () => {
    const room = `adapter_${Date.now()}`;
    await rooms.createRoom({ name: room, emptyTimeout: 60 });
    await dispatches.createDispatch(room, AGENT_NAME);
    // P5: accepted, waiting for the only process, still held in prewarm (P6: none warm).
    await eventually(() => launchingJobs(server).some((job) => job.room?.name === room), 15_000, 'the job accepted');
    expect(server.activeJobs).toEqual([]);
    expect(warmProcesses(server)).toBe(0);
    expect(jobProcesses()).toHaveLength(1);

    await writeFile(release, '');
    await eventually(() => server.activeJobs.some((job) => job.job.room?.name === room), 30_000, 'the job running');
    expect(launchingJobs(server)).toEqual([]);
    // P4: its process holds the worker's one slot; agents alone would fork a spare at once
    // (it warms in about a second now that prewarm is released).
    await Bun.sleep(3_000);
    expect(warmProcesses(server)).toBe(0);
    expect(jobProcesses()).toHaveLength(1);
    // P8: agents' loop monitor watches the running job, from a thread of its own.
    const [runningPid] = jobProcesses();
    expect(loopMonitorThreads(runningPid!)).toBe(1);

    // Once the job is over (its room gone), its process exits and a replacement warms.
    await rooms.deleteRoom(room);
    await eventually(() => warmProcesses(server) === 1, 30_000, 'a warm replacement');
    expect(server.activeJobs).toEqual([]);
    expect(jobProcesses()).toHaveLength(1);
    // P8: the warm process, waiting for a job, runs no monitor (agents started it once warm).
    const [warmPid] = jobProcesses();
    expect(warmPid).not.toBe(runningPid);
    await Bun.sleep(500);
    expect(loopMonitorThreads(warmPid!)).toBe(0);
  }, 90_000);
});

test("a job hears its worker's stop request as it arrives (the session moves then, not once agents has closed the job)", async () => {
  const child = fork(join(import.meta.dir, 'fixtures/stop-listener.ts'), { execPath: process.execPath, stdio: 'pipe' });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    await eventually(() => out.includes('listening'), 10_000, 'the job stand-in to listen');
    // agents' own message, as its supervised process sends it.
    child.send({ case: 'shutdownRequest', value: { reason: 'shutdown request' } });
    expect(await Promise.race([exited, Bun.sleep(10_000).then(() => 'still running')])).toBe(0);
    expect(out).toContain('stop heard; stoppedByWorker true');
  } finally {
    child.kill('SIGKILL');
  }
}, 30_000);
