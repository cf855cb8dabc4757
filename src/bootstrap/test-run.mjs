// Runs `bun test`, streaming its output live while keeping the tail of it, and turns
// bun's closing summary into the one line CI reads: `N passed, N failed[, N skipped]`.
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { repoRoot } from './paths.mjs';
import { run } from './processes.mjs';

const KEPT_OUTPUT_BYTES = 64 * 1024; // the summary is at the very end

const ANSI_ESCAPES = /\x1b\[[0-9;]*[A-Za-z]/g;
const RAN_LINE = /^Ran (\d+) tests? across \d+ files?\./;
const COUNT_LINE = /^\s*(\d+) (pass|fail|skip|todo|error)s?\s*$/;
const EXPECT_LINE = /^\s*(\d+) expect\(\) calls?\s*$/;
const BAILED_LINE = /^Bailed out after (\d+) failures?/;
const FILE_HEADER = /^(\S+\.test\.[cm]?[jt]sx?):$/;
const RESULT_LINE = /^\((pass|fail|skip|todo)\) (.*?)(?: \[[\d.]+m?s\])?$/;
/** bun's list of the failures again, after the counts: its lines carry no file or error. */
const FAILED_LIST_LINE = /^\d+ tests? failed:$/;
const FAILURE_CONTEXT_LINES = 30;
const FAILURE_LINE_CHARS = 400;
const RECAPPED_FAILURES = 10;

/**
 * Reads bun's report a line at a time and keeps each failing test with the lines bun printed
 * for it (its error): CI shows only the run's tail, where the recap of them is printed.
 */
export function failureCollector() {
  const failures = [];
  let file = '';
  let since = [];
  let listing = false;
  return {
    failures,
    line(raw) {
      const text = raw.replace(ANSI_ESCAPES, '');
      if (FAILED_LIST_LINE.test(text.trim())) listing = true;
      if (listing) return;
      const header = text.match(FILE_HEADER);
      if (header) {
        file = header[1];
        since = [];
        return;
      }
      const result = text.match(RESULT_LINE);
      if (!result) {
        since.push(text.length > FAILURE_LINE_CHARS ? `${text.slice(0, FAILURE_LINE_CHARS)}…` : text);
        if (since.length > FAILURE_CONTEXT_LINES) since.shift();
        return;
      }
      const name = result[2];
      if (result[1] === 'fail' && !failures.some((failure) => failure.file === file && failure.name === name))
        failures.push({ file, name, context: since.filter((line) => line.trim() !== '') });
      since = [];
    },
  };
}

/** The recap printed before the closing line: each failing test, its file and its error's last lines. */
export function failureRecap(failures) {
  if (failures.length === 0) return '';
  const shown = failures.slice(0, RECAPPED_FAILURES);
  const blocks = shown.map(
    ({ file, name, context }) => `(fail) ${file} > ${name}\n${context.map((line) => `    ${line}`).join('\n')}`,
  );
  const more = failures.length > shown.length ? `\n… and ${failures.length - shown.length} more failing tests` : '';
  return `\n[failed tests] ${failures.length}\n${blocks.join('\n')}${more}\n`;
}

/**
 * Counts from bun's summary block (the lines after the last blank line before
 * "Ran N tests across M files."), or null when there is no summary (bun crashed).
 */
export function parseBunSummary(output) {
  const lines = output.replace(ANSI_ESCAPES, '').split(/\r?\n/);
  let ranIndex = -1;
  for (let i = lines.length - 1; i >= 0 && ranIndex < 0; i--) if (RAN_LINE.test(lines[i])) ranIndex = i;
  if (ranIndex < 0) return null;

  const counts = { pass: 0, fail: 0, skip: 0, todo: 0, error: 0 };
  let sawCount = false;
  for (let i = ranIndex - 1; i >= 0 && lines[i].trim() !== ''; i--) {
    const match = lines[i].match(COUNT_LINE);
    if (match) {
      counts[match[2]] = Number(match[1]);
      sawCount = true;
    }
    const expects = lines[i].match(EXPECT_LINE);
    if (expects) counts.expects = Number(expects[1]);
  }
  if (sawCount) return counts;

  // With --bail bun prints no counts, only "Ran N tests…" and "Bailed out after N failures".
  const bailed = lines
    .slice(ranIndex + 1)
    .map((line) => line.match(BAILED_LINE))
    .find(Boolean);
  if (!bailed) return null;
  const ran = Number(lines[ranIndex].match(RAN_LINE)[1]);
  counts.fail = Number(bailed[1]);
  counts.pass = Math.max(0, ran - counts.fail);
  return counts;
}

/** The closing line. A red run never reads as green: errors or a failing exit count as failures. */
export function summaryLine(counts, exitCode) {
  if (!counts) return '0 passed, 1 failed';
  const failed = Math.max(counts.fail, counts.error, exitCode === 0 ? 0 : 1);
  const skipped = counts.skip + counts.todo;
  return `${counts.pass} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;
}

/**
 * `bun test` flags that take their value as the next argument (the rest are flags alone or
 * `--flag=value`); what is left are bun's path filters.
 */
const FLAGS_WITH_VALUE = new Set([
  '-t',
  '--test-name-pattern',
  '--timeout',
  '--reporter',
  '--reporter-outfile',
  '--seed',
  '--preload',
  '--rerun-each',
  '--retry',
  '--max-concurrency',
  '--coverage-dir',
  '--coverage-reporter',
  '--path-ignore-patterns',
]);
const HEAVY_SUITES_FILE = 'test/heavy-suites.json';

/** Splits `bun test` arguments into flags and path filters. */
export function splitArguments(args) {
  const flags = [];
  const filters = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i].startsWith('-')) {
      flags.push(args[i]);
      if (FLAGS_WITH_VALUE.has(args[i]) && i + 1 < args.length) flags.push(args[++i]);
    } else filters.push(args[i]);
  }
  return { flags, filters };
}

/** Every test file under test/ (repository-relative, sorted). */
function testFiles() {
  return readdirSync(join(repoRoot, 'test'), { recursive: true })
    .map((path) => `test/${path.split(sep).join('/')}`)
    .filter((path) => path.endsWith('.test.ts'))
    .sort();
}

/**
 * The streams of a run (docs/testing.md#streams): the heavy suites (test/heavy-suites.json)
 * one at a time beside the rest one at a time, then the `alone` suites one at a time with
 * nothing beside them. A file matches a filter as bun matches it, by a part of its path.
 */
export function planStreams(filters, files, heavyPrefixes, alonePrefixes = []) {
  const wanted = (file) => filters.length === 0 || filters.some((f) => file.includes(f.replace(/^\.\//, '')));
  const under = (prefixes) => (file) => prefixes.some((prefix) => file.startsWith(prefix));
  const chosen = files.filter(wanted);
  const alone = chosen.filter(under(alonePrefixes));
  const heavy = chosen.filter((file) => !alone.includes(file) && under(heavyPrefixes)(file));
  const light = chosen.filter((file) => !alone.includes(file) && !heavy.includes(file));
  return { heavy, light, alone };
}

/** The counts of several streams' summaries added up (null when a stream has none). */
export function addCounts(all) {
  if (all.some((counts) => !counts)) return null;
  const total = { pass: 0, fail: 0, skip: 0, todo: 0, error: 0, expects: 0 };
  for (const counts of all) for (const key of Object.keys(total)) total[key] += counts[key] ?? 0;
  return total;
}

/**
 * Runs `bun test` in the repo root and resolves with { exitCode, counts }. By default the heavy
 * stream beside the light ones (splitByTime), then the suites that run alone (planStreams);
 * LIKENESS_TEST_STREAMS=1, a `--parallel` of the caller's own, or a selection all in one stream
 * runs one `bun test` as given.
 */
export async function runBunTest(bunPath, args, env) {
  const { flags, filters } = splitArguments(args);
  const plan = JSON.parse(readFileSync(join(repoRoot, HEAVY_SUITES_FILE), 'utf8'));
  const lightCount = Math.max(1, Number(env.LIKENESS_TEST_LIGHT_STREAMS ?? LIGHT_STREAMS) || LIGHT_STREAMS);
  // The `balance` suites wait on real time: beside one light stream they even the heavy one's length; with more, they are light.
  const heavyPrefixes = [...Object.keys(plan.suites), ...(lightCount > 1 ? [] : Object.keys(plan.balance ?? {}))];
  const streams = planStreams(filters, testFiles(), heavyPrefixes, Object.keys(plan.alone ?? {}));
  const groups = [streams.light, streams.heavy, streams.alone].filter((files) => files.length > 0).length;
  if (env.LIKENESS_TEST_STREAMS === '1' || flags.some((flag) => flag.startsWith('--parallel')) || groups < 2) {
    const only = await runStream(bunPath, args, env, '');
    process.stdout.write(failureRecap(only.failures));
    return only;
  }

  const lights = splitByTime(streams.light, suiteSeconds(), lightCount).filter((files) => files.length > 0);
  process.stderr.write(
    `[bootstrap] streams: ${streams.heavy.length} heavy suites one at a time (${HEAVY_SUITES_FILE}) beside ${lights.map((files) => files.length).join(' + ')} others${lights.length > 1 ? ` in ${lights.length} (nice +${LIGHT_NICE})` : ''}; then ${streams.alone.length} alone\n`,
  );
  const stream = (name, files, nice = 0) =>
    files.length > 0
      ? runStream(bunPath, [...renameReport(flags, name), ...files.map(asPath)], env, name, nice)
      : Promise.resolve({
          exitCode: 0,
          counts: { pass: 0, fail: 0, skip: 0, todo: 0, error: 0, expects: 0 },
          failures: [],
        });
  const names = lights.map((_, i) => (i === 0 ? 'light' : `light${i + 1}`));
  const [heavy, ...light] = await Promise.all([
    stream('heavy', streams.heavy),
    ...lights.map((files, i) => stream(names[i], files, lights.length > 1 ? LIGHT_NICE : 0)),
  ]);
  const alone = await stream('alone', streams.alone);
  const results = [...light, heavy, alone];
  const counts = addCounts(results.map((result) => result.counts));
  process.stdout.write(failureRecap(results.flatMap((result) => result.failures)));
  if (counts) {
    const each = [
      ...names.map((name, i) => `${name}: ${describe(light[i].counts)}`),
      `heavy: ${describe(heavy.counts)}`,
    ];
    process.stdout.write(
      `\n[all streams] ${counts.pass} pass, ${counts.fail} fail, ${counts.expects} expect() calls (${each.join('; ')}; alone: ${describe(alone.counts)})\n`,
    );
  }
  return { exitCode: results.find((result) => result.exitCode !== 0)?.exitCode ?? 0, counts };
}

/**
 * The light suites run in this many streams at once beside the heavy one
 * (LIKENESS_TEST_LIGHT_STREAMS), each a few nice levels below it so that a full machine serves
 * the heavy stream first. One on two cores: with two, the load reached 18 and real-time checks
 * failed in both kinds of stream (docs/benchmarks.md, run 17); more suit a bigger machine.
 */
const LIGHT_STREAMS = 1;
const LIGHT_NICE = 3;
/** Each file's seconds in a recent run (`bun bench/suite/timings.ts REPORT.xml --write`), to even the light streams. */
const SUITE_SECONDS_FILE = 'test/suite-seconds.json';

function suiteSeconds() {
  try {
    return JSON.parse(readFileSync(join(repoRoot, SUITE_SECONDS_FILE), 'utf8'));
  } catch {
    return {};
  }
}

/**
 * The files in `count` lists of about equal time (longest first, each to the shortest list so
 * far), each list in path order; a file with no recorded time counts as the median one.
 */
export function splitByTime(files, seconds, count) {
  const known = files
    .map((file) => seconds[file])
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  const typical = known.length > 0 ? known[Math.floor(known.length / 2)] : 1;
  const cost = (file) => (Number.isFinite(seconds[file]) ? seconds[file] : typical);
  const lists = Array.from({ length: count }, () => ({ files: [], total: 0 }));
  for (const file of [...files].sort((a, b) => cost(b) - cost(a) || a.localeCompare(b))) {
    const shortest = lists.reduce((least, list) => (list.total < least.total ? list : least));
    shortest.files.push(file);
    shortest.total += cost(file);
  }
  return lists.map((list) => list.files.sort());
}

/** bun reads `./…` as that file, not as a filter. */
const asPath = (file) => `./${file}`;
const describe = (counts) => (counts ? `${counts.pass} pass, ${counts.fail} fail` : 'no summary');

/** The first light stream writes the JUnit report asked for; the others beside it: suite.xml → suite.heavy.xml, suite.light2.xml. */
function renameReport(flags, stream) {
  if (stream === 'light') return flags;
  const rename = (path) => path.replace(/(\.xml)?$/, `.${stream}$1`);
  return flags.map((flag, i) => {
    if (flag.startsWith('--reporter-outfile=')) return `--reporter-outfile=${rename(flag.slice(19))}`;
    if (flags[i - 1] === '--reporter-outfile') return rename(flag);
    return flag;
  });
}

/** One `bun test`, its output streamed a whole line at a time (two run at once), its tail kept. */
async function runStream(bunPath, args, env, name, nice = 0) {
  let kept = '';
  const collector = failureCollector();
  const childEnv = { ...env };
  // Piped output makes bun drop colours; keep them when a person is watching.
  if (process.stdout.isTTY && !('NO_COLOR' in childEnv)) childEnv.FORCE_COLOR ??= '1';
  // bun reports tests on stderr; console output of the tests goes to stdout.
  const lines = (out, report = false) => {
    let partial = '';
    return {
      write(chunk) {
        const text = partial + chunk.toString();
        const end = text.lastIndexOf('\n') + 1;
        partial = text.slice(end);
        if (end > 0) out.write(text.slice(0, end));
        if (report && end > 0) for (const line of text.slice(0, end - 1).split(/\r?\n/)) collector.line(line);
        kept = (kept + chunk.toString()).slice(-KEPT_OUTPUT_BYTES);
      },
      flush() {
        if (partial) out.write(`${partial}\n`);
      },
    };
  };
  const stdout = lines(process.stdout);
  const stderr = lines(process.stderr, true);
  // --no-orphans: bun exits if the bootstrap is killed outright, taking whatever the
  // suites spawned with it.
  const command = ['test', '--no-orphans', '--timeout=60000', ...args];
  // `nice -n` adds to this process's niceness; what the stream starts inherits it.
  const exitCode = await run(
    nice > 0 ? 'nice' : bunPath,
    nice > 0 ? ['-n', String(nice), bunPath, ...command] : command,
    {
      cwd: repoRoot,
      env: childEnv,
      stdin: name ? 'ignore' : 'inherit',
      onStdout: (chunk) => stdout.write(chunk),
      onStderr: (chunk) => stderr.write(chunk),
    },
  );
  stdout.flush();
  stderr.flush();
  return { exitCode, counts: parseBunSummary(kept), failures: collector.failures };
}
