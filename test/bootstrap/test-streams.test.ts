// How `npm test` splits a run into its streams (src/bootstrap/test-run.mjs,
// docs/testing.md#streams) and adds their summaries into the one closing line.
import { describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  addCounts,
  failureCollector,
  failureRecap,
  parseBunSummary,
  planStreams,
  splitArguments,
  splitByTime,
  summaryLine,
} from '../../src/bootstrap/test-run.mjs';

const FILES = [
  'test/agent/offline/offline-models.test.ts',
  'test/http/list-paging.test.ts',
  'test/sessions/visitor-billing.test.ts',
  'test/sessions/start-rules.test.ts',
];
const HEAVY = ['test/agent/offline/', 'test/sessions/visitor-billing.test.ts'];

describe('the streams of npm test', () => {
  test('flags stay flags, with their values; the rest are path filters', () => {
    expect(splitArguments(['-t', 'minute', 'test/sessions', '--reporter-outfile', '/tmp/x.xml', '--bail'])).toEqual({
      flags: ['-t', 'minute', '--reporter-outfile', '/tmp/x.xml', '--bail'],
      filters: ['test/sessions'],
    });
  });

  test('the heavy suites go to their stream, by folder or file; filters choose as bun does', () => {
    expect(planStreams([], FILES, HEAVY, ['test/http/list-paging.test.ts'])).toEqual({
      heavy: ['test/agent/offline/offline-models.test.ts', 'test/sessions/visitor-billing.test.ts'],
      light: ['test/sessions/start-rules.test.ts'],
      alone: ['test/http/list-paging.test.ts'],
    });
    expect(planStreams(['./test/sessions'], FILES, HEAVY)).toEqual({
      heavy: ['test/sessions/visitor-billing.test.ts'],
      light: ['test/sessions/start-rules.test.ts'],
      alone: [],
    });
    expect(planStreams(['paging'], FILES, HEAVY)).toEqual({
      heavy: [],
      light: ['test/http/list-paging.test.ts'],
      alone: [],
    });
  });

  test('the light suites are split into streams of about equal time, each in path order', () => {
    const seconds = {
      'test/a.test.ts': 60,
      'test/b.test.ts': 40,
      'test/c.test.ts': 30,
      'test/d.test.ts': 25,
      'test/e.test.ts': 5,
    };
    const files = [...Object.keys(seconds), 'test/new.test.ts'];
    // Longest first, each to the shorter list so far; the new file counts as the median (30 s):
    // a 60 | b 40, c 30 (70) | new 30 (90) | d 25 (95) | e 5 (95).
    expect(splitByTime(files, seconds, 2)).toEqual([
      ['test/a.test.ts', 'test/e.test.ts', 'test/new.test.ts'],
      ['test/b.test.ts', 'test/c.test.ts', 'test/d.test.ts'],
    ]);
    expect(splitByTime(files, {}, 1)).toEqual([files.sort()]);
    expect(splitByTime(['test/a.test.ts'], seconds, 2)).toEqual([['test/a.test.ts'], []]);
  });

  test('test/suite-seconds.json times nearly every suite, so the light streams stay even', () => {
    const root = join(import.meta.dir, '../..');
    const seconds = JSON.parse(readFileSync(join(root, 'test/suite-seconds.json'), 'utf8')) as Record<string, number>;
    const suites = [...new Bun.Glob('test/**/*.test.ts').scanSync(root)];
    const timed = suites.filter((path) => Number.isFinite(seconds[path]) && seconds[path]! >= 0);
    // New suites count as the median until the next `bench/suite/timings.ts --write`.
    expect(timed.length / suites.length).toBeGreaterThan(0.9);
  });

  test('every entry of test/heavy-suites.json names a file or folder that exists', () => {
    const root = join(import.meta.dir, '../..');
    const { suites, balance, alone } = JSON.parse(readFileSync(join(root, 'test/heavy-suites.json'), 'utf8')) as {
      suites: Record<string, string>;
      balance: Record<string, string>;
      alone: Record<string, string>;
    };
    for (const [path, why] of Object.entries({ ...suites, ...balance, ...alone })) {
      expect(why.length).toBeGreaterThan(0);
      expect(Bun.file(join(root, path)).size > 0 || path.endsWith('/'), path).toBe(true);
      if (path.endsWith('/')) expect(readdirCount(join(root, path)), path).toBeGreaterThan(0);
    }
  });

  test('the closing line adds both streams up; a stream without a summary makes the run red', () => {
    const light = parseBunSummary('\n 12 pass\n 1 fail\n 40 expect() calls\nRan 13 tests across 2 files. [1.00s]\n');
    const heavy = parseBunSummary('\n 5 pass\n 0 fail\n 9 expect() calls\nRan 5 tests across 1 file. [1.00s]\n');
    expect(light).toEqual({ pass: 12, fail: 1, skip: 0, todo: 0, error: 0, expects: 40 });
    const both = addCounts([light, heavy]);
    expect(both).toEqual({ pass: 17, fail: 1, skip: 0, todo: 0, error: 0, expects: 49 });
    expect(summaryLine(both, 1)).toBe('17 passed, 1 failed');
    expect(addCounts([light, null])).toBeNull();
    expect(summaryLine(addCounts([light, null]))).toBe('0 passed, 1 failed');
  });

  test("the recap before the closing line names each failing test, its file and its error, from bun's own report", () => {
    const dir = mkdtempSync(join(tmpdir(), 'likeness-recap-'));
    try {
      mkdirSync(join(dir, 'test'));
      const failing = "import { expect, test } from 'bun:test';\n";
      writeFileSync(
        join(dir, 'test/a.test.ts'),
        `${failing}test('fine', () => expect(1).toBe(1));\ntest('adds up', () => expect(1 + 1).toBe(3));\n`,
      );
      writeFileSync(
        join(dir, 'test/b.test.ts'),
        `${failing}test('throws', () => { throw new Error('boom in b'); });\n`,
      );
      const run = Bun.spawnSync([process.execPath, 'test'], { cwd: dir, env: { ...process.env, NO_COLOR: '1' } });
      const collector = failureCollector();
      for (const line of run.stderr.toString().split('\n')) collector.line(line);

      // bun takes the files in the folder's order: on tmpfs (the suites' TMPDIR) newest first.
      expect(collector.failures.map(({ file, name }) => `${file} > ${name}`).sort()).toEqual([
        'test/a.test.ts > adds up',
        'test/b.test.ts > throws',
      ]);
      const recap = failureRecap(collector.failures);
      expect(recap).toContain('[failed tests] 2');
      expect(recap).toContain('(fail) test/a.test.ts > adds up');
      expect(recap).toMatch(/Expected: 3\s+Received: 2/);
      expect(recap).toContain('error: boom in b');
      expect(recap).not.toContain('fine');
      expect(failureRecap([])).toBe('');

      // bun's closing list of the failures (after many files) names no file: not read again.
      for (const line of ['test/z.test.ts:', '(pass) last [1.00ms]', '', '1 tests failed:', '(fail) adds up [0.20ms]'])
        collector.line(line);
      // bun takes the files in the folder's order: on tmpfs (the suites' TMPDIR) newest first.
      expect(collector.failures.map(({ file, name }) => `${file} > ${name}`).sort()).toEqual([
        'test/a.test.ts > adds up',
        'test/b.test.ts > throws',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function readdirCount(dir: string): number {
  return [...new Bun.Glob('**/*.test.ts').scanSync(dir)].length;
}
