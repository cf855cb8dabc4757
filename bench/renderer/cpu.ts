// CPU by process and by thread from /proc, for bench/renderer: the job processes (children of
// the bench running `job_proc_lazy_main`), LiveKit, the agents' inference process, recorders.
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's clock ticks per second for /proc/<pid>/stat times (USER_HZ). */
const TICKS_PER_SECOND = 100;

export interface CpuSnapshot {
  /** utime + stime ticks per job process. */
  jobs: Map<number, number>;
  livekit: Map<number, number>;
  /** The agents' shared inference process (the end-of-turn model). */
  inference: Map<number, number>;
  /** The recordings' encoders (ffmpeg, children of the job processes). */
  recorders: Map<number, number>;
  /** This process's CPU seconds. */
  self: number;
}

/** CPU ticks so far of this process's children: the agent's job processes and the LiveKit server. */
export function cpuSnapshot(): CpuSnapshot {
  const jobs = new Map<number, number>();
  const livekit = new Map<number, number>();
  const inference = new Map<number, number>();
  const recorders = new Map<number, number>();
  const children = Bun.spawnSync(['pgrep', '-a', '-P', String(process.pid)])
    .stdout.toString()
    .split('\n')
    .filter(Boolean);
  for (const line of children) {
    const pid = Number(line.split(' ')[0]);
    const ticks = processTicks(pid);
    if (ticks === undefined) continue;
    if (line.includes('job_proc_lazy_main')) {
      jobs.set(pid, ticks);
      for (const child of Bun.spawnSync(['pgrep', '-P', String(pid), 'ffmpeg'])
        .stdout.toString()
        .split('\n')) {
        const recorderTicks = child ? processTicks(Number(child)) : undefined;
        if (recorderTicks !== undefined) recorders.set(Number(child), recorderTicks);
      }
    } else if (line.includes('livekit-server')) livekit.set(pid, ticks);
    else if (line.includes('inference')) inference.set(pid, ticks);
  }
  const usage = process.cpuUsage();
  return { jobs, livekit, inference, recorders, self: (usage.user + usage.system) / 1e6 };
}

export function jobPids(): number[] {
  const children = Bun.spawnSync(['pgrep', '-a', '-P', String(process.pid)])
    .stdout.toString()
    .split('\n');
  return children.filter((l) => l.includes('job_proc_lazy_main')).map((l) => Number(l.split(' ')[0]));
}

/** The processes' threads: `pid:tid|name` → CPU ticks so far (thread names without their trailing numbers). */
export function threadTicks(pids: number[]): Map<string, number> {
  const threads = new Map<string, number>();
  for (const pid of pids) {
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[\s\d#]+$/, '');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        threads.set(`${pid}:${tid}|${name}`, Number(fields[11]) + Number(fields[12]));
      } catch {}
    }
  }
  return threads;
}

/**
 * The eight busiest thread names between two samples, as shares of one core (libwebrtc names
 * its threads), divided by `per` (the sessions the processes served).
 */
export function byThread(
  before: Map<string, number>,
  after: Map<string, number>,
  wallSeconds: number,
  per = 1,
): string {
  const byName = new Map<string, number>();
  for (const [key, ticks] of after) {
    const name = key.slice(key.indexOf('|') + 1);
    byName.set(name, (byName.get(name) ?? 0) + ticks - (before.get(key) ?? 0));
  }
  const top = [...byName].sort((a, b) => b[1] - a[1]).slice(0, 8);
  return top
    .map(([name, ticks]) => `${name} ${((ticks / TICKS_PER_SECOND / wallSeconds / per) * 100).toFixed(1)} %`)
    .join(', ');
}

export function processTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** CPU seconds used between two snapshots by the processes alive at the end (new ones from zero). */
export function cpuSeconds(before: Map<number, number>, after: Map<number, number>): number {
  let ticks = 0;
  for (const [pid, now] of after) ticks += now - (before.get(pid) ?? 0);
  return ticks / TICKS_PER_SECOND;
}
