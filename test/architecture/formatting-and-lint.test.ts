// The tree is formatted and linted as biome.jsonc says (issue 31): `biome ci` over it reports
// nothing. A break fails here with the file, the rule and its message.
import { expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runCommand } from '../support/run-command.ts';

const ROOT = join(import.meta.dir, '../..');

/** The project's biome, `command` over `paths` in `cwd`: its exit code and all it printed. */
async function biome(cwd: string, command: string, ...paths: string[]): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await runCommand(
    [join(ROOT, 'node_modules/.bin/biome'), command, '--colors=off', '--max-diagnostics=50', ...paths],
    { cwd },
  );
  return { code, output: `${stdout}\n${stderr}` };
}

test('biome ci finds nothing to format, sort or fix', async () => {
  const { code, output } = await biome(ROOT, 'ci');
  expect({ code, findings: code === 0 ? '' : output.trim() }).toEqual({ code: 0, findings: '' });
}, 60_000);

// The project's own rules (biome.jsonc `plugins`), each broken on purpose in a tree of its own,
// and each quiet in the one file allowed to do what it forbids.
test('each of the project’s lint rules fails a file that breaks it, and spares its own helper', async () => {
  const tree = mkdtempSync(join(tmpdir(), 'likeness-lint-rules-'));
  try {
    const plugins = [
      'one-sha256.grit',
      'one-id.grit',
      'one-control-characters.grit',
      'agent-logs-through-its-logger.grit',
      'one-error-map.grit',
      'one-database-clock.grit',
      'one-owned-row.grit',
    ].map((name) => join(import.meta.dir, 'lint', name));
    const files: Record<string, string> = {
      'biome.json': JSON.stringify({ plugins, linter: { enabled: true } }),
      'src/limits/hashed.ts':
        "export const h = (t: string) => new Bun.CryptoHasher('sha256').update(t).digest('hex');\n",
      'src/auth/hashed.ts':
        "import { createHash } from 'node:crypto';\nexport const h = (t: string) => createHash('sha256').update(t).digest('hex');\n",
      'src/tools/ids.ts':
        "import { randomBase62 } from '../db/ids.ts';\nexport const id = () => 'tool_' + randomBase62(22);\n",
      'agent/names.ts': 'export const forbidden = /[\\u0000-\\u001F\\u007F]/;\n',
      'src/knowledge/text.ts': 'export const controls = /(?![\\t\\n])\\p{Cc}/gu;\n',
      'src/workers/lease.ts':
        "import { sql } from 'drizzle-orm';\nexport const until = (s: number) => sql`now() + make_interval(secs => ${s})`;\n",
      'src/db/clock.ts':
        "import { sql } from 'drizzle-orm';\nexport const ago = (s: number) => sql`now() - make_interval(secs => ${s})`;\n",
      'src/tools/delete.ts':
        "import { and, eq } from 'drizzle-orm';\nexport const mine = (t: { id: string; accountId: string }, a: string, i: string) => and(eq(t.accountId, a), eq(t.id, i));\n",
      'src/db/owned.ts':
        "import { and, eq } from 'drizzle-orm';\nexport const isOwned = (t: { id: string; accountId: string }, a: string, i: string) => and(eq(t.id, i), eq(t.accountId, a));\n",
      'agent/fallback.ts': "export const warn = (l?: { warn(m: string): void }) => (l ?? console).warn('x');\n",
      // The helpers themselves, and what the rules leave alone: a CSP hash (base64), a token,
      // and tests, which build odd text and cache keys on purpose.
      'src/http/control-characters.ts': 'export const controls = /\\p{Cc}/u;\n',
      'test/agent/prints.ts': "console.log('a test prints');\n",
      'src/tools/answers.ts':
        "import { ErrorResponse } from '../http/errors.ts';\nexport const answers = { 404: ErrorResponse };\n",
      'src/http/errors.ts': 'export const ErrorResponse = {};\nexport const all = { 401: ErrorResponse };\n',
      'test/odd-bytes.ts':
        "import { createHash } from 'node:crypto';\nexport const c = /\\p{Cc}/u;\nexport const k = createHash('sha256').update('x').digest('hex');\n",
      'src/contract/hashing.ts':
        "import { createHash } from 'node:crypto';\nexport const sha256Hex = (t: string) => createHash('sha256').update(t).digest('hex');\n",
      'src/db/ids.ts':
        "export const randomBase62 = (n: number) => String(n);\nexport const newId = (p: string) => p + '_' + randomBase62(22);\n",
      'src/embed/pages.ts':
        "import { createHash } from 'node:crypto';\nexport const csp = createHash('sha256').update('x').digest('base64');\n",
      'src/auth/tokens.ts':
        "import { randomBase62 } from '../db/ids.ts';\nexport const token = () => randomBase62(43);\n",
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), text);
    }
    const { output } = await biome(tree, 'lint', '.');
    const found = [...output.matchAll(/^((?:src|agent|test)\/\S+?):\d+:\d+ plugin[\s\S]*?× (.+)$/gm)].map(
      ([, file, message]) => `${file}: ${message!.split(':')[0]}`,
    );
    expect(found.sort()).toEqual([
      'agent/fallback.ts: The console in the agent',
      'agent/names.ts: Control characters of its own',
      'src/auth/hashed.ts: A SHA-256 in hex of its own',
      'src/knowledge/text.ts: Control characters of its own',
      'src/limits/hashed.ts: A SHA-256 in hex of its own',
      'src/tools/answers.ts: An error body by hand in a response map',
      "src/tools/delete.ts: An account's row named by hand",
      'src/tools/ids.ts: An id of its own',
      "src/workers/lease.ts: A time on the database's clock by hand",
    ]);
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}, 60_000);

// biome.jsonc's size rules (issue 47), as the project sets them: a product function over 60 lines
// fails unless a reason stands beside it (suites and benches are not held to it), and any file
// over 400 lines (blank ones not counted) unless its top says why.
test('a function over 60 lines in src/ or agent/, or a file over 400, fails without a reason beside it', async () => {
  const tree = mkdtempSync(join(tmpdir(), 'likeness-size-rules-'));
  try {
    const project = Bun.JSONC.parse(await Bun.file(join(ROOT, 'biome.jsonc')).text()) as Record<string, unknown>;
    const lines = Array.from({ length: 61 }, (_, i) => `  total += ${i};`);
    const long = `export function long(): number {\n  let total = 0;\n${lines.join('\n')}\n  return total;\n}\n`;
    const big = Array.from({ length: 401 }, (_, i) => `export const c${i} = ${i};\n`).join('');
    const files: Record<string, string> = {
      // The project's linter settings alone (its plugins are tested above).
      'biome.json': JSON.stringify({ linter: project.linter, overrides: project.overrides }),
      'src/long.ts': long,
      'agent/long.ts': long,
      'src/reasoned.ts': `// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a table, one line per entry\n${long}`,
      'src/short.ts': long.replace(/ {2}total \+= (?:[6-9]|\d\d);\n/g, ''),
      'test/long.ts': long,
      'bench/long.ts': long,
      'src/big.ts': big,
      'test/big.ts': big,
      'test/reasoned-big.ts': `// biome-ignore-all lint/style/noExcessiveLinesPerFile: one costly service shared\n${big}`,
      'src/blank-lines.ts': big.replaceAll('\n', '\n\n').replace(/^(export const c\d+ = \d+;\n\n){2}/, ''),
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), text);
    }
    const { output } = await biome(tree, 'lint', '.');
    const found = [...output.matchAll(/^(\S+\.ts):\d+:\d+ lint\/(?:complexity|style)\/(noExcessiveLines\w+)/gm)].map(
      ([, file, rule]) => `${file} ${rule}`,
    );
    expect(found.sort()).toEqual([
      'agent/long.ts noExcessiveLinesPerFunction',
      'src/big.ts noExcessiveLinesPerFile',
      'src/long.ts noExcessiveLinesPerFunction',
      'test/big.ts noExcessiveLinesPerFile',
    ]);
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}, 60_000);
