// The whole tree type-checks under strict TypeScript: a type error fails the suite. The check is
// TypeScript 7's native compiler (package `typescript-7`): the same errors as 5.9's tsc, which
// the editors and the API client's generator keep using, in a fifth of its CPU (docs/decisions.md).
import { expect, test } from 'bun:test';
import { join } from 'node:path';

test('tsc --noEmit reports no errors', async () => {
  const root = join(import.meta.dir, '..', '..');
  const child = Bun.spawn(['bun', join(root, 'node_modules/typescript-7/bin/tsc'), '--noEmit', '-p', root], {
    cwd: root,
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  expect(out).toBe('');
  expect(code).toBe(0);
}, 120_000);
