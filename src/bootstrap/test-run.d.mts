// Types of test-run.mjs (plain Node, no build step) for the suite that checks it.
export interface SummaryCounts {
  pass: number;
  fail: number;
  skip: number;
  todo: number;
  error: number;
  expects?: number;
}
export function parseBunSummary(output: string): SummaryCounts | null;
export function summaryLine(counts: SummaryCounts | null, exitCode?: number): string;
export function splitArguments(args: string[]): { flags: string[]; filters: string[] };
export function planStreams(
  filters: string[],
  files: string[],
  heavyPrefixes: string[],
  alonePrefixes?: string[],
): { heavy: string[]; light: string[]; alone: string[] };
export function splitByTime(files: string[], seconds: Record<string, number>, count: number): string[][];
export function addCounts(all: (SummaryCounts | null)[]): Required<SummaryCounts> | null;
export interface FailedTest {
  file: string;
  name: string;
  context: string[];
}
export function failureCollector(): { failures: FailedTest[]; line(text: string): void };
export function failureRecap(failures: FailedTest[]): string;
export function runBunTest(
  bunPath: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ exitCode: number; counts: SummaryCounts | null; failures: FailedTest[] }>;
