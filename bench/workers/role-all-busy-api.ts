// bench/workers/role-all-busy-api: the agent worker in the API's process (`--role all`) against the
// worker in its own (`serve --role agent`, the same control plane and LiveKit), with and without a
// busy API (issue 41 point 4). Per round: a session is started, an rtc-node visitor hears the
// greeting, then a ~9 s `say`; the load (waves of 200 GET /v1/identities at once, the first 10
// with a 200 KB blank-line Markdown and the 93-byte million-column table cell) runs through the
// whole round. Printed per configuration: gaps between the audio frames the visitor receives
// (p50/p99/max; the longest silence in the speech: the fake voice's spaces are 70 ms), the
// heartbeat interval (sent by the worker, answered by the control plane), starts refused and
// sessions taken for agentless, dispatch → job running and → agent in the room (LiveKit's
// clock), end → the job process reaped, and CPU. The visitor, the load and the providers' wire
// fakes run in processes of their own: only the API (with `all`, the worker too) is in this one.
//   node src/bootstrap/index.mjs bench bench/workers/role-all-busy-api.ts [--rounds 3]
//     [--modes all,agent] [--loads idle,burst] [--database pglite|postgres]
// biome-ignore-all lint/style/noExcessiveLinesPerFile: one bench with the roles of its own child processes (the visitor, the load), so one file reproduces a run
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

/** src/contract's, not imported: the probe preloaded into the worker stays light. */
const HEARTBEAT_PATH = '/internal/workers/heartbeat';
const SPEECH =
  'Let me tell you about our opening hours and our shop in the old town and the market on Saturdays and the new bakery near the station';
const BEAT_MARK = 'likeness-bench-heartbeat';
const CLI = join(import.meta.dir, '../../src/cli/index.ts');

/**
 * Heartbeats as the worker in this process sends them: when sent, when answered (epoch ms; -1: it
 * failed, or ran past the TTL and was aborted). Returns the undo.
 */
function probeHeartbeats(onBeat: (sent: number, answered: number) => void): () => void {
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const beat = String(input instanceof Request ? input.url : input).endsWith(HEARTBEAT_PATH);
    const sent = Date.now();
    try {
      const response = await original(input, init);
      if (beat) onBeat(sent, response.ok ? Date.now() : -1);
      return response;
    } catch (error) {
      if (beat) onBeat(sent, -1);
      throw error;
    }
  }) as typeof fetch;
  return () => {
    globalThis.fetch = original;
  };
}

/** A stream's lines as they come. */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = stream.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    buffer += decoder.decode(read.value, { stream: true });
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      yield buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
    }
  }
}
const stdinLines = () => lines(Bun.stdin.stream());
/** A helper's messages to this process, told apart from the log lines rtc-node and the agents SDK print. */
const MESSAGE_MARK = 'likeness-bench-message ';
const say = (message: unknown) => process.stdout.write(`${MESSAGE_MARK}${JSON.stringify(message)}\n`);

/**
 * A helper: this file again in another mode, spoken to over stdin/stdout. Its stdout is read all
 * the time (rtc-node and the agents SDK log there too): a full pipe would block the helper.
 */
function helper(args: string[]) {
  const child = Bun.spawn(['bun', import.meta.path, ...args], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' });
  const messages: unknown[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  void (async () => {
    for await (const line of lines(child.stdout)) {
      if (!line.startsWith(MESSAGE_MARK)) continue;
      messages.push(JSON.parse(line.slice(MESSAGE_MARK.length)));
      wake?.();
    }
    ended = true;
    wake?.();
  })();
  return {
    child,
    async next<T>(): Promise<T> {
      while (!messages.length) {
        if (ended) throw new Error(`helper ${args[1]} exited`);
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
      return messages.shift() as T;
    },
    send(line: string) {
      child.stdin.write(`${line}\n`);
      child.stdin.flush();
    },
  };
}

async function fakesProcess() {
  const { startProviderFakes } = await import('../../test/support/fakes/index.ts');
  const fakes = await startProviderFakes();
  fakes.openai.respond(() => 'Happy to help.');
  say(fakes.env);
  for await (const _ of stdinLines());
  await fakes.stop();
  process.exit(0);
}

/** Joins and hears the greeting out; at `listen`, the next speech's frames as they arrived; at `leave`, leaves. */
async function visitorProcess(session: { room_name: string; token: string; rtc_url: string }) {
  const { TrackKind } = await import('@livekit/rtc-node');
  const { AGENT_STATE_ATTRIBUTE } = await import('../../src/contract/index.ts');
  const { eventually, joinAsVisitor } = await import('../../test/support/visitor.ts');
  const { Listener } = await import('../../test/support/voice.ts');
  let ears: InstanceType<typeof Listener> | undefined;
  const visitor = await joinAsVisitor(session, {
    audioOnly: true,
    onTrack: (track) => {
      if (track.kind === TrackKind.KIND_AUDIO) ears = new Listener(track);
    },
  });
  const joined = performance.now();
  // Every agent that joins: one the control plane took for lost is replaced by another (asked afresh).
  const agents = new Set<string>();
  setInterval(() => agents.add(visitor.agent()?.identity ?? ''), 100).unref();
  await eventually(
    () => visitor.agent()?.attributes[AGENT_STATE_ATTRIBUTE] === 'listening' && ears,
    60_000,
    'listening',
  );
  const greeted = await eventually(() => ears!.soundAfter(joined), 30_000, 'the greeting');
  await eventually(() => ears!.silenceAfter(greeted, 500) !== undefined, 30_000, 'quiet after the greeting');
  say({ ready: true });
  const commands = stdinLines();
  await commands.next(); // listen: the speech comes next
  const from = performance.now();
  const first = await eventually(() => ears!.soundAfter(from), 30_000, 'the speech');
  const last = await eventually(() => ears!.silenceAfter(first, 600), 60_000, 'the end of the speech');
  const frames = ears!.levels.filter((l) => l.at >= first - 1 && l.at <= last);
  let run = 0;
  let silenceMs = 0;
  for (const frame of frames) {
    run = frame.rms > 300 ? 0 : run + 10;
    silenceMs = Math.max(silenceMs, run);
  }
  agents.delete('');
  say({ intervals: frames.slice(1).map((f, i) => f.at - frames[i]!.at), silenceMs, agents: agents.size });
  await commands.next(); // leave
  await visitor.leave();
  process.exit(0);
}

/** Waves until told to stop; hostile uploads in the first 10 (an account keeps 100 documents). */
async function loadProcess(url: string, key: string) {
  const { documentForm } = await import('../../test/knowledge/support.ts');
  const auth = { authorization: `Bearer ${key}` };
  let stop = false;
  void (async () => {
    // `stop`, or the end of stdin (this process's parent gone).
    for await (const line of stdinLines()) if (line === 'stop') break;
    stop = true;
  })();
  const stats = { waves: 0, failed: 0, slowestMs: 0 };
  const call = async (path: string, init: RequestInit = {}) => {
    const asked = performance.now();
    const answer = await fetch(`${url}${path}`, { ...init, headers: auth }).catch(() => undefined);
    await answer?.arrayBuffer();
    if (!answer?.ok) stats.failed++;
    stats.slowestMs = Math.max(stats.slowestMs, performance.now() - asked);
  };
  const upload = (content: string, name: string) =>
    call('/v1/documents', { method: 'POST', body: documentForm(content, name) });
  say({ loading: true });
  while (!stop) {
    await Promise.all([
      ...(stats.waves < 10 ? [upload('\n'.repeat(200_000), 'x.md'), upload(TABLE_CELL, 'x.html')] : []),
      ...Array.from({ length: 200 }, () => call('/v1/identities')),
    ]);
    stats.waves++;
  }
  say(stats);
  process.exit(0);
}
const TABLE_CELL = '<table><tr><td colspan="1000000" rowspan="1000000">x</td></tr></table>';

/** CPU seconds of a process so far (utime + stime, Linux). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Children of `pid` (zombies too: exited, not yet reaped), job processes told apart by their entry. */
function childrenOf(pid: number): { pid: number; job: boolean }[] {
  const out = Bun.spawnSync(['ps', '--ppid', String(pid), '-o', 'pid=,args=']).stdout.toString();
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => ({ pid: Number.parseInt(line, 10), job: line.includes('job_proc_lazy_main') }));
}

function percentile(list: number[], p: number): number {
  const sorted = list.toSorted((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : Number.NaN;
}
const ms = (n: number) => (Number.isFinite(n) ? `${Math.round(n)}` : '–');
const p50max = (list: number[]) => `${ms(percentile(list, 50))} / ${ms(Math.max(...list))}`;

async function main(values: { rounds?: string; modes?: string; loads?: string; database?: string }) {
  const { AgentDispatchClient, RoomServiceClient } = await import('livekit-server-sdk');
  const { ParticipantInfo_Kind } = await import('@livekit/protocol');
  const { createBenchAccount, startBenchService } = await import('../support/index.ts');
  const { loadAgentSettings } = await import('../../src/config.ts');
  const { freshDatabase } = await import('../../test/support/postgres.ts');
  const { drain, readUntil } = await import('../../test/support/processes.ts');
  const { eventually } = await import('../../test/support/visitor.ts');
  const rounds = Number(values.rounds);
  const fakes = helper(['--mode', 'fakes']);
  Object.assign(process.env, await fakes.next<Record<string, string>>());
  const rows: string[] = [];
  const started = new Date();
  const load0 = loadavg()[0]!;

  for (const mode of values.modes!.split(',')) {
    for (const loadKind of values.loads!.split(',')) {
      const database: Record<string, string> =
        values.database === 'postgres' ? { DATABASE_URL: await freshDatabase() } : {};
      const bench = await startBenchService({
        agent: mode === 'all',
        env: { CREDITS_ONBOARDING: '0', SESSION_ADMISSION: 'workers', SESSION_REJOIN_SECONDS: '0', ...database },
      });
      const { service } = bench;
      const { livekit } = service.services;
      const beats: { sent: number; answered: number }[] = [];
      const onBeat = (sent: number, answered: number) => beats.push({ sent, answered });
      let workerPid = process.pid;
      let agentProcess: ReturnType<typeof Bun.spawn> | undefined;
      const dataDir = await mkdtemp(join(tmpdir(), 'likeness-bench-agent-'));
      const unprobe = mode === 'all' ? probeHeartbeats(onBeat) : undefined;
      if (mode !== 'all') {
        agentProcess = Bun.spawn(['bun', '--preload', import.meta.path, CLI, 'serve', '--role', 'agent'], {
          env: {
            ...process.env,
            ROLE_ALL_BENCH_PROBE: '1',
            LIVEKIT_URL: livekit.url,
            LIVEKIT_API_KEY: livekit.apiKey,
            LIVEKIT_API_SECRET: livekit.apiSecret,
            INTERNAL_URL: service.url,
            DATA_DIR: dataDir,
          },
          stdout: 'pipe',
          stderr: 'pipe',
        });
        workerPid = agentProcess.pid;
        await readUntil(agentProcess.stdout as ReadableStream<Uint8Array>, 'agent worker registered');
        drain(agentProcess.stdout as ReadableStream<Uint8Array>);
        void (async () => {
          for await (const line of lines(agentProcess.stderr as ReadableStream<Uint8Array>)) {
            const [mark, sent, answered] = line.split(' ');
            if (mark === BEAT_MARK) onBeat(Number(sent), Number(answered));
          }
        })();
      }
      const http = livekit.url.replace(/^ws/, 'http');
      const roomsApi = new RoomServiceClient(http, livekit.apiKey, livekit.apiSecret);
      const dispatchApi = new AgentDispatchClient(http, livekit.apiKey, livekit.apiSecret);
      const { post, createIdentity } = await createBenchAccount(service, 'owner@example.com');
      const identityId = await createIdentity();
      // Every slot warm before the first round, as a service that has been up a while.
      const slots = loadAgentSettings(process.env).maxJobs;
      await eventually(() => childrenOf(workerPid).filter((c) => c.job).length >= slots, 120_000, 'warm job processes');
      await Bun.sleep(2_000);

      // The machine's 1-minute load average (ours included): other runs on it show here.
      const machineLoad = loadavg()[0]!;
      const intervals: number[] = [];
      const figures = { silenceMs: 0, dispatchToRunning: [] as number[], dispatchToRoom: [] as number[] };
      /** Starts refused with 503, and sessions the control plane took for agentless and dispatched again. */
      let refused = 0;
      let lost = 0;
      const reaping: number[] = [];
      let apiCpu = 0;
      let workerCpu = 0;
      let loadedMs = 0;
      const windows: [number, number][] = [];
      let loadStats = { waves: 0, failed: 0, slowestMs: 0 };
      for (let round = 0; round < rounds; round++) {
        const attacker = await service.services.operations.createAccount({
          email: `attacker${round}@example.com`,
          credits: 1000,
        });
        const load =
          loadKind === 'burst'
            ? helper(['--mode', 'load', '--url', service.url, '--key', attacker.api_key])
            : undefined;
        if (load) await load.next();
        const from = Date.now();
        const cpu0 = [process.cpuUsage(), mode === 'all' ? 0 : cpuSeconds(workerPid)] as const;
        const warm = childrenOf(workerPid)
          .filter((c) => c.job)
          .map((c) => c.pid);
        // A 503 (no worker heard from within the TTL) is retried, as its Retry-After asks, and counted.
        const body = { identity_id: identityId, idle_timeout_seconds: 0 };
        let start = await post('/v1/sessions/start', body);
        for (let tries = 1; start.status === 503 && tries < 20; tries++, refused++)
          start = await Bun.sleep(500).then(() => post('/v1/sessions/start', body));
        if (start.status !== 200) throw new Error(`start: ${start.status} ${await start.text()}`);
        const session = (await start.json()) as { room_name: string; token: string; rtc_url: string };
        const visitor = helper(['--mode', 'visitor', '--session', JSON.stringify(session)]);
        const [dispatch] = await dispatchApi.listDispatch(session.room_name);
        const running = await eventually(
          async () => (await dispatchApi.listDispatch(session.room_name))[0]?.state?.jobs[0]?.state?.startedAt,
          60_000,
          'the job running',
        );
        const agentIn = await eventually(
          async () =>
            (await roomsApi.listParticipants(session.room_name)).find((p) => p.kind === ParticipantInfo_Kind.AGENT)
              ?.joinedAtMs,
          60_000,
          'the agent in the room',
        );
        const dispatchedMs = Number(dispatch!.state!.createdAt) / 1e6;
        figures.dispatchToRunning.push(Number(running) / 1e6 - dispatchedMs);
        figures.dispatchToRoom.push(Number(agentIn) - dispatchedMs);
        await visitor.next();
        visitor.send('listen');
        const said = await post(`/v1/sessions/${session.room_name}/say`, { text: SPEECH });
        if (said.status !== 200) throw new Error(`say: ${said.status} ${await said.text()}`);
        const heard = await visitor.next<{ intervals: number[]; silenceMs: number; agents: number }>();
        if (heard.agents > 1) lost++;
        intervals.push(...heard.intervals);
        figures.silenceMs = Math.max(figures.silenceMs, heard.silenceMs);
        // The end: the visitor leaves, the session ends; its job process must exit and be reaped.
        const endedAt = Date.now();
        visitor.send('leave');
        await post(`/v1/sessions/${session.room_name}/end`);
        // Gone from the process table: a zombie (exited, not reaped by its parent) still shows.
        const gone = await eventually(
          () => (warm.some((pid) => !childrenOf(workerPid).some((c) => c.pid === pid)) ? Date.now() : undefined),
          60_000,
          'the job process reaped',
        );
        reaping.push(gone - endedAt);
        await visitor.child.exited;
        const cpuUsed = process.cpuUsage(cpu0[0]);
        apiCpu += (cpuUsed.user + cpuUsed.system) / 1e6;
        if (mode !== 'all') workerCpu += cpuSeconds(workerPid) - cpu0[1];
        loadedMs += Date.now() - from;
        windows.push([from, Date.now()]);
        if (load) {
          load.send('stop');
          loadStats = await load.next();
        }
        await Bun.sleep(1_000);
      }

      const inWindows = (at: number) => windows.some(([a, b]) => at >= a && at <= b);
      // Beats are recorded as they complete: a slow one after the next, so in time order first.
      const gapsOf = (times: number[]) =>
        times
          .toSorted((a, b) => a - b)
          .flatMap((t, i, sorted) => (i > 0 && inWindows(t) && inWindows(sorted[i - 1]!) ? [t - sorted[i - 1]!] : []));
      const sentGap = Math.max(...gapsOf(beats.map((b) => b.sent)));
      const answeredGap = Math.max(...gapsOf(beats.flatMap((b) => (b.answered > 0 ? [b.answered] : []))));
      const share = (seconds: number) => `${Math.round((seconds / (loadedMs / 1000)) * 100)} %`;
      rows.push(
        [
          `${mode === 'all' ? '--role all' : 'worker apart'}, ${loadKind}`,
          `${ms(percentile(intervals, 50))} / ${ms(percentile(intervals, 99))} / ${ms(Math.max(...intervals))}`,
          ms(figures.silenceMs),
          `${ms(sentGap)} / ${ms(answeredGap)}`,
          `${refused} / ${lost}`,
          p50max(figures.dispatchToRunning),
          p50max(figures.dispatchToRoom),
          p50max(reaping),
          mode === 'all' ? share(apiCpu) : `${share(apiCpu)} + ${share(workerCpu)}`,
          loadKind === 'burst'
            ? `${loadStats.waves} waves, slowest ${ms(loadStats.slowestMs)} ms, ${loadStats.failed} failed`
            : '–',
          `${machineLoad.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`,
        ].reduce((row, cell) => `${row} ${cell} |`, '|'),
      );
      console.log(rows.at(-1));
      if (agentProcess) {
        agentProcess.kill('SIGTERM');
        await agentProcess.exited;
      }
      await bench.stop();
      await rm(dataDir, { recursive: true, force: true });
      unprobe?.();
    }
  }
  console.log(
    `\n${started.toISOString()}, ${values.database}, ${rounds} rounds each, load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log(
    '| configuration | frame gap p50 / p99 / max (ms) | longest silence in speech (ms) | heartbeat interval max, sent / answered (ms) ' +
      '| starts refused / sessions that lost their agent ' +
      '| dispatch → job running p50 / max (ms) | dispatch → agent in room p50 / max (ms) | end → job process reaped p50 / max (ms) ' +
      '| CPU of the API process (+ worker), % of a core | load (last round) | machine load |',
  );
  console.log(`|${' --- |'.repeat(11)}`);
  for (const row of rows) console.log(row);
  fakes.child.stdin.end();
  process.exit(0);
}

// Last: the consts above are initialised before any mode runs.
if (process.env.ROLE_ALL_BENCH_PROBE) {
  // Preloaded into `serve --role agent` (and its jobs, which send no heartbeat).
  probeHeartbeats((sent, answered) => process.stderr.write(`${BEAT_MARK} ${sent} ${answered}\n`));
} else {
  const { values } = parseArgs({
    options: {
      mode: { type: 'string', default: 'main' },
      session: { type: 'string' },
      url: { type: 'string' },
      key: { type: 'string' },
      rounds: { type: 'string', default: '3' },
      modes: { type: 'string', default: 'all,agent' },
      loads: { type: 'string', default: 'idle,burst' },
      database: { type: 'string', default: 'pglite' },
    },
  });
  if (values.mode === 'fakes') await fakesProcess();
  else if (values.mode === 'visitor') await visitorProcess(JSON.parse(values.session!));
  else if (values.mode === 'load') await loadProcess(values.url!, values.key!);
  else await main(values);
}
