// npm test runs its suites ahead of other busy processes when it may (src/bootstrap/priority.mjs):
// a child Node process asks for a nice value and reads back what the kernel gave it.
import { describe, expect, test } from 'bun:test';

const PRIORITY = new URL('../../src/bootstrap/priority.mjs', import.meta.url).pathname;

/** What raiseTestPriority said, and the nice value and autogroup line the process then had. */
async function raisedIn(env: Record<string, string>) {
  const script = `
    import { readFileSync } from 'node:fs';
    const { raiseTestPriority } = await import(${JSON.stringify(PRIORITY)});
    const said = raiseTestPriority(process.env);
    const nice = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[16]);
    let autogroup = '';
    try { autogroup = readFileSync('/proc/self/autogroup', 'utf8').trim(); } catch {}
    console.log(JSON.stringify({ said, nice, autogroup }));`;
  // setsid: an autogroup of its own, whose nice value is read back.
  const child = Bun.spawn(['setsid', 'node', '--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdout: 'pipe',
  });
  const out = await new Response(child.stdout).text();
  expect(await child.exited).toBe(0);
  return JSON.parse(out) as {
    said: { nice: number; raised: string[] };
    nice: number;
    autogroup: string;
  };
}

describe('the suites’ priority', () => {
  const privileged = process.getuid?.() === 0;

  test('raised for the process (not its autogroup) when allowed, else left as it was', async () => {
    const result = await raisedIn({ LIKENESS_TEST_NICE: '-15' });
    if (privileged) {
      expect(result.said).toEqual({ nice: -15, raised: ['process'] });
      expect(result.nice).toBe(-15);
      // Its group's weight is not raised: processes it starts in sessions of their own would lose.
      expect(result.autogroup).toEndWith('nice 0');
    } else {
      expect(result.said.raised).toEqual([]);
    }
  });

  test('LIKENESS_TEST_NICE=0 leaves it alone', async () => {
    const result = await raisedIn({ LIKENESS_TEST_NICE: '0' });
    expect(result.said).toEqual({ nice: 0, raised: [] });
    expect(result.autogroup).toEndWith('nice 0');
  });
});
