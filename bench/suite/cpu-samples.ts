// Samples the machine's CPU once a second until stopped: `epoch_ms busy_jiffies idle_jiffies`
// a line (from /proc/stat, all cores). Run beside a serial suite run, then give the file to
// timings.ts (--cpu) to see which files compute and which wait:
//
//   bun bench/suite/cpu-samples.ts > /tmp/cpu.log & LIKENESS_TEST_STREAMS=1 npm test -- \
//     --reporter=junit --reporter-outfile=/tmp/suite.xml; kill %1
//   bun bench/suite/timings.ts /tmp/suite.xml --cpu /tmp/cpu.log
import { readFileSync } from 'node:fs';

for (;;) {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number) as number[];
  process.stdout.write(`${Date.now()} ${user! + nice! + system! + irq! + softirq! + steal!} ${idle! + iowait!}\n`);
  await Bun.sleep(1000);
}
