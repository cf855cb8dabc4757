// Each test file's wall time, tests and expect() calls, slowest first, from a run's JUnit
// report (issue 42 point 1: measure before cutting). Make the report with the run itself:
//
//   npm test -- --reporter=junit --reporter-outfile=/tmp/suite.xml
//   bun bench/suite/timings.ts /tmp/suite.xml [--top 40]
//
// With --write, each file's seconds are also merged into test/suite-seconds.json, which `npm test`
// reads to even its light streams (give it each stream's report in turn: suite.xml,
// suite.light2.xml, suite.heavy.xml, suite.alone.xml).
//
// A file's time is Bun's: from its load to its last test, its beforeAll/afterAll included.
// With --cpu (samples of a serial run by cpu-samples.ts) each file also gets the cores the
// machine kept busy while it ran: near 2 it computes (models, rendering, Chromium, process
// starts), near 0 it waits (real time: billing minutes, audio, timeouts). The files ran one
// after another in the report's order, up to the samples' last second.

import { readFile, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';

const [file] = process.argv.slice(2);
if (!file) throw new Error('usage: bun bench/suite/timings.ts REPORT.xml [--top N] [--cpu SAMPLES]');
const option = (name: string) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const top = Number(option('--top')) || Number.POSITIVE_INFINITY;
const xml = await readFile(file, 'utf8');
const samples = option('--cpu')
  ? (await readFile(option('--cpu')!, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => line.split(' ').map(Number) as [number, number, number])
  : undefined;

interface FileTiming {
  file: string;
  seconds: number;
  tests: number;
  assertions: number;
  failures: number;
  /** Cores busy on average while it ran (with --cpu). */
  cores: number;
}

/** Lays the files end to end back from the last sample and reads the busy cores of each window. */
function busyCores(inOrder: FileTiming[], cpu: [number, number, number][]) {
  const cores = availableParallelism();
  const at = (ms: number) => cpu.reduce((best, s) => (Math.abs(s[0] - ms) < Math.abs(best[0] - ms) ? s : best));
  let end = cpu.at(-1)![0];
  for (const f of [...inOrder].reverse()) {
    const start = end - f.seconds * 1000;
    const [a, b] = [at(start), at(end)];
    const busy = b[1] - a[1];
    const all = busy + (b[2] - a[2]);
    f.cores = all > 0 ? (cores * busy) / all : Number.NaN;
    end = start;
  }
}

const attribute = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
// The files are the testsuites directly under <testsuites> (two spaces in); nested ones are describes.
const files: FileTiming[] = [...xml.matchAll(/^ {2}<testsuite [^>]*>/gm)].map(([tag]) => ({
  file: attribute(tag, 'file') ?? '?',
  seconds: Number(attribute(tag, 'time')),
  tests: Number(attribute(tag, 'tests')),
  assertions: Number(attribute(tag, 'assertions')),
  failures: Number(attribute(tag, 'failures')),
  cores: Number.NaN,
}));
if (samples) busyCores(files, samples);
if (process.argv.includes('--write')) {
  const path = new URL('../../test/suite-seconds.json', import.meta.url);
  const known = JSON.parse(await readFile(path, 'utf8').catch(() => '{}')) as Record<string, number>;
  for (const f of files) known[f.file] = Math.round(f.seconds * 10) / 10;
  const sorted = Object.fromEntries(Object.entries(known).sort(([a], [b]) => a.localeCompare(b)));
  await writeFile(path, `${JSON.stringify(sorted, null, 2)}\n`);
}
files.sort((a, b) => b.seconds - a.seconds);
const sum = (pick: (f: FileTiming) => number) => files.reduce((total, f) => total + pick(f), 0);
const total = sum((f) => f.seconds);
const area = new Map<string, number>();
for (const f of files) {
  const name = f.file.split('/').slice(0, 2).join('/');
  area.set(name, (area.get(name) ?? 0) + f.seconds);
}

console.log(
  `${files.length} files, ${sum((f) => f.tests)} tests, ${sum((f) => f.assertions)} expect() calls, ${(total / 60).toFixed(1)} min of files`,
);
const cpuColumn = samples ? ' cores busy |' : '';
console.log(
  `\n| file | s | share | tests | expect() |${cpuColumn}\n|---|---:|---:|---:|---:|${samples ? '---:|' : ''}`,
);
for (const f of files.slice(0, top))
  console.log(
    `| ${f.file}${f.failures ? ` (${f.failures} failed)` : ''} | ${f.seconds.toFixed(1)} | ${((100 * f.seconds) / total).toFixed(1)} % | ${f.tests} | ${f.assertions} |${samples ? ` ${f.cores.toFixed(2)} |` : ''}`,
  );
if (samples) {
  const busy = files.reduce((sum, f) => sum + (Number.isNaN(f.cores) ? 0 : f.cores * f.seconds), 0);
  console.log(
    `\nCPU: ${(busy / 60).toFixed(1)} core-minutes over ${(total / 60).toFixed(1)} minutes of files (${(busy / total).toFixed(2)} cores busy on average)`,
  );
}
console.log('\n| area | min | share |\n|---|---:|---:|');
for (const [name, seconds] of [...area].sort((a, b) => b[1] - a[1]))
  console.log(`| ${name} | ${(seconds / 60).toFixed(1)} | ${((100 * seconds) / total).toFixed(1)} % |`);
