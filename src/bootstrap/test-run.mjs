// Runs `bun test`, streaming its output live while keeping the tail of it, and turns
// bun's closing summary into the one line CI reads: `N passed, N failed[, N skipped]`.
import { repoRoot } from './paths.mjs';
import { run } from './processes.mjs';

const KEPT_OUTPUT_BYTES = 64 * 1024; // the summary is at the very end

const ANSI_ESCAPES = /\x1b\[[0-9;]*[A-Za-z]/g;
const RAN_LINE = /^Ran (\d+) tests? across \d+ files?\./;
const COUNT_LINE = /^\s*(\d+) (pass|fail|skip|todo|error)s?\s*$/;
const BAILED_LINE = /^Bailed out after (\d+) failures?/;

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

/** Runs `bun test <args>` in the repo root; resolves with { exitCode, counts }. */
export async function runBunTest(bunPath, args, env) {
  let kept = '';
  const keep = (chunk) => {
    kept = (kept + chunk.toString()).slice(-KEPT_OUTPUT_BYTES);
  };
  const childEnv = { ...env };
  // Piped output makes bun drop colours; keep them when a person is watching.
  if (process.stdout.isTTY && !('NO_COLOR' in childEnv)) childEnv.FORCE_COLOR ??= '1';

  // --no-orphans: bun exits if the bootstrap is killed outright, taking whatever the
  // suites spawned with it.
  const exitCode = await run(bunPath, ['test', '--no-orphans', '--timeout=60000', ...args], {
    cwd: repoRoot,
    env: childEnv,
    stdin: 'inherit',
    onStdout: (chunk) => {
      process.stdout.write(chunk);
      keep(chunk);
    },
    onStderr: (chunk) => {
      process.stderr.write(chunk);
      keep(chunk);
    },
  });
  return { exitCode, counts: parseBunSummary(kept) };
}
