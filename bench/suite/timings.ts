// Each test file's wall time, tests and expect() calls, slowest first, from a run's JUnit
// report (issue 42 point 1: measure before cutting). Make the report with the run itself:
//
//   npm test -- --reporter=junit --reporter-outfile=/tmp/suite.xml
//   bun bench/suite/timings.ts /tmp/suite.xml [--top 40]
//
// A file's time is Bun's: from its load to its last test, its beforeAll/afterAll included.
import { readFile } from 'node:fs/promises';

const [file] = process.argv.slice(2);
if (!file) throw new Error('usage: bun bench/suite/timings.ts REPORT.xml [--top N]');
const top = Number(process.argv[process.argv.indexOf('--top') + 1]) || Number.POSITIVE_INFINITY;
const xml = await readFile(file, 'utf8');

interface FileTiming {
  file: string;
  seconds: number;
  tests: number;
  assertions: number;
  failures: number;
}

const attribute = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
// The files are the testsuites directly under <testsuites> (two spaces in); nested ones are describes.
const files: FileTiming[] = [...xml.matchAll(/^ {2}<testsuite [^>]*>/gm)].map(([tag]) => ({
  file: attribute(tag, 'file') ?? '?',
  seconds: Number(attribute(tag, 'time')),
  tests: Number(attribute(tag, 'tests')),
  assertions: Number(attribute(tag, 'assertions')),
  failures: Number(attribute(tag, 'failures')),
}));
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
console.log('\n| file | s | share | tests | expect() |\n|---|---:|---:|---:|---:|');
for (const f of files.slice(0, top))
  console.log(
    `| ${f.file}${f.failures ? ` (${f.failures} failed)` : ''} | ${f.seconds.toFixed(1)} | ${((100 * f.seconds) / total).toFixed(1)} % | ${f.tests} | ${f.assertions} |`,
  );
console.log('\n| area | min | share |\n|---|---:|---:|');
for (const [name, seconds] of [...area].sort((a, b) => b[1] - a[1]))
  console.log(`| ${name} | ${(seconds / 60).toFixed(1)} | ${((100 * seconds) / total).toFixed(1)} % |`);
