// The tree is formatted and linted as biome.jsonc says (issue 31): `biome ci` over it reports
// nothing. A break fails here with the file, the rule and its message.
import { expect, test } from 'bun:test';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '../..');

test('biome ci finds nothing to format, sort or fix', async () => {
  const biome = Bun.spawn([join(ROOT, 'node_modules/.bin/biome'), 'ci', '--colors=off', '--max-diagnostics=50'], {
    cwd: ROOT,
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([
    new Response(biome.stdout).text(),
    new Response(biome.stderr).text(),
    biome.exited,
  ]);
  expect({ code, findings: code === 0 ? '' : `${out}\n${err}`.trim() }).toEqual({ code: 0, findings: '' });
}, 60_000);
