// Where a run's CPU goes, by kind of process (issue 42 point 1): samples /proc once a second
// and keeps each process's last CPU time, then adds them up by what the process is (LiveKit
// servers, the agents' job processes, Chromium, ffmpeg, Postgres, the test runners…). Run it
// beside `npm test`; it rewrites its summary to OUT after every sample, so stop it any time:
//
//   bun bench/suite/cpu-by-process.ts /tmp/cpu-by-process.json & npm test; kill %1
//   cat /tmp/cpu-by-process.json
//
// A process seen only between two samples is missed; a short one (a CLI call, an ffprobe)
// counts from its first sample on. Enough to say what dominates, not to bill it to the second.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

const [out = '/tmp/cpu-by-process.json'] = process.argv.slice(2);
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** What a process is, from its command line. The first rule that matches names it. */
const KINDS: [string, RegExp][] = [
  ['agents job process', /job_proc_lazy_main/],
  ['agents inference process (turn detector)', /inference_proc_lazy_main/],
  ['agent worker (its own process)', /agent\/index\.ts|--role agent/],
  ['bun test (a stream: the suites and the services they start in it)', /\bbun(\.exe)?\s+test\b/],
  ['likeness CLI or service process', /src\/(main|cli)/],
  ['livekit-server', /livekit-server/],
  ['chromium', /chrom/],
  ['ffmpeg / ffprobe', /ff(mpeg|probe)/],
  ['postgres', /postgres/],
  ['redis', /redis-server/],
  ['moto (S3)', /moto/],
  ['offline model servers', /llama|whisper|piper|sherpa|onnx/],
  ['tsc / biome / node tools', /tsc|biome|drizzle-kit|schemathesis/],
  ['bootstrap (npm, node)', /npm|bootstrap/],
];

const kindOf = (cmdline: string) =>
  KINDS.find(([, pattern]) => pattern.test(cmdline))?.[0] ?? `other: ${cmdline.split(' ')[0]?.split('/').at(-1)}`;

/** pid → [kind, CPU seconds so far]. A pid reused by another process is a new entry (its start time). */
const seen = new Map<string, { kind: string; seconds: number }>();
const startedAt = Date.now();

for (;;) {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: the fields start after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const [utime, stime, start] = [Number(fields[11]), Number(fields[12]), fields[19]];
      const key = `${pid}:${start}`;
      const entry = seen.get(key);
      const seconds = (utime + stime) / TICKS_PER_SECOND;
      if (entry) entry.seconds = seconds;
      else {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
        if (cmdline) seen.set(key, { kind: kindOf(cmdline), seconds });
      }
    } catch {
      // Gone between the listing and the read.
    }
  }
  const byKind = new Map<string, { seconds: number; processes: number }>();
  for (const { kind, seconds } of seen.values()) {
    const total = byKind.get(kind) ?? { seconds: 0, processes: 0 };
    total.seconds += seconds;
    total.processes += 1;
    byKind.set(kind, total);
  }
  const rows = [...byKind.entries()]
    .map(([kind, { seconds, processes }]) => ({ kind, cpu_seconds: Math.round(seconds), processes }))
    .sort((a, b) => b.cpu_seconds - a.cpu_seconds);
  writeFileSync(
    out,
    `${JSON.stringify({ wall_seconds: Math.round((Date.now() - startedAt) / 1000), rows }, null, 1)}\n`,
  );
  await Bun.sleep(1000);
}
