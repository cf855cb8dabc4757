// Progress output of the bootstrap. It goes to stderr so that stdout carries only
// what the test runner and the final summary print.

export function log(message) {
  process.stderr.write(`[bootstrap] ${message}\n`);
}

export function secondsSince(startedAt) {
  return `${((performance.now() - startedAt) / 1000).toFixed(1)}s`;
}
