// The whole tree type-checks under strict TypeScript: a type error fails the suite.
import { expect, test } from 'bun:test';
import { join } from 'node:path';

test('tsc --noEmit reports no errors', async () => {
  const root = join(import.meta.dir, '..', '..');
  const child = Bun.spawn(['bun', join(root, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', root], {
    cwd: root,
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  expect(out).toBe('');
  expect(code).toBe(0);
}, 120_000);
