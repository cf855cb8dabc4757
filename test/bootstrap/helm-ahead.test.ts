// `npm test` builds Helm (the first time: minutes of Go compiling on both cores) during its
// bootstrap when the run holds the Helm suite, not inside that suite where the compile ran beside
// the other suites' real-time checks (a fresh machine's run 26). Which runs hold it:
import { expect, test } from 'bun:test';

const HELM = new URL('../../src/bootstrap/helm.mjs', import.meta.url).pathname;
const { runsHelmSuite } = (await import(HELM)) as { runsHelmSuite(args: string[]): boolean };

test('every suite, or a path holding test/deploy/helm-chart: Helm is built first; other paths: not', () => {
  for (const args of [
    [],
    ['--reporter=junit', '--reporter-outfile=/tmp/r.xml'],
    ['test'],
    ['./test/deploy/'],
    ['test/deploy/helm-chart.test.ts'],
  ])
    expect({ args, runs: runsHelmSuite(args) }).toEqual({ args, runs: true });
  for (const args of [['test/knowledge'], ['test/deploy/compose-matches-code.test.ts'], ['./test/http', 'test/auth']])
    expect({ args, runs: runsHelmSuite(args) }).toEqual({ args, runs: false });
});
