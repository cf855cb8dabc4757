// Every path of this repository named in a comment or a doc exists (issue 47): comments and
// docs that name a file which moved send the next engineer to nothing. Read: the comments of
// code and configuration (`//`, `/* … */` and `*` lines, `#`) and the whole of each Markdown
// file, for paths under the project's top-level folders. Code itself is left out: tests name
// files on purpose that do not exist (a fixture tree, a breach).
import { expect, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..', '..');
const TOP_LEVEL = ['src', 'agent', 'test', 'bench', 'docs', 'deploy', 'examples', 'drizzle', '.ci'];
const EXTENSIONS = 'ts|tsx|mjs|cjs|js|md|json|yaml|yml|sql|css|html|py|grit|sh|toml|patch';
/** A path under a top-level folder, not the tail of a longer path or a URL's; an anchor may follow. */
const NAMED_PATH = new RegExp(
  `(?<![\\w./@%-])((?:${TOP_LEVEL.join('|').replace('.', '\\.')})/[\\w./%@-]+\\.(?:${EXTENSIONS}))\\b`,
  'g',
);
const CODE = /\.(ts|tsx|mjs|cjs|js|py|sh|yaml|yml|toml|grit|css)$/;
/**
 * The journal of measurements: each entry names the files of its day, some since merged or
 * renamed (the entry says what was measured then, and is not rewritten).
 */
const JOURNALS = new Set(['docs/benchmarks.md']);

/** The comment text of a file of code or configuration; all of a Markdown file. */
function commentText(path: string, text: string): string {
  if (!CODE.test(path)) return text;
  const kept: string[] = [];
  let inBlock = false;
  for (const line of text.split('\n')) {
    const trimmed = line.trimStart();
    if (inBlock) {
      kept.push(line);
      if (line.includes('*/')) inBlock = false;
    } else if (/^(\/\/|#|\*)/.test(trimmed)) kept.push(line);
    else if (trimmed.startsWith('/*')) {
      kept.push(line);
      inBlock = !line.includes('*/');
    } else {
      // A comment after code on the same line.
      const at = line.indexOf(' // ');
      if (at >= 0) kept.push(line.slice(at));
    }
  }
  return kept.join('\n');
}

/** The paths `text` names that are neither files nor folders here, nor the tail of a tracked path. */
function missingPaths(text: string, tracked: readonly string[], exists: (path: string) => boolean): string[] {
  const missing = new Set<string>();
  for (const match of text.matchAll(NAMED_PATH)) {
    const path = match[1]!.replace(/\.$/, '');
    const decoded = decodeURIComponent(path);
    if (exists(path) || exists(decoded)) continue;
    // Named relative to its own folder (a chart's `examples/…`): a tracked path ends with it.
    if (tracked.some((file) => file.endsWith(`/${decoded}`))) continue;
    missing.add(path);
  }
  return [...missing];
}

async function trackedFiles(): Promise<string[]> {
  const child = Bun.spawn(['git', 'ls-files'], { cwd: ROOT, stdout: 'pipe' });
  return (await new Response(child.stdout).text()).split('\n').filter(Boolean);
}

test('every path named in a comment or a doc exists', async () => {
  const tracked = await trackedFiles();
  const readable = tracked.filter((file) => CODE.test(file) || file.endsWith('.md'));
  expect(readable.length).toBeGreaterThan(400);
  const broken: string[] = [];
  for (const file of readable) {
    if (JOURNALS.has(file)) continue;
    const text = commentText(file, readFileSync(join(ROOT, file), 'utf8'));
    for (const path of missingPaths(text, tracked, (p) => existsSync(join(ROOT, p))))
      broken.push(`${file} names ${path}`);
  }
  expect(broken).toEqual([]);
});

test('a comment naming a file that moved is found; code, URLs and tails of real paths are not', () => {
  const tracked = ['src/sessions/sweeps.ts', 'deploy/helm/likeness/examples/cluster-values.yaml'];
  const exists = (path: string) => tracked.includes(path) || tracked.some((f) => f.startsWith(`${path}/`));
  const source = [
    '// The sweeps (src/sweeps.ts) run every second; see src/sessions/sweeps.ts#L10.',
    // (Cut in two: this file's own comment text must not name it.)
    "const fixture = 'src/identities/a.ts'; // see docs/" + 'gone.md#section',
    ' * [`examples/cluster-values.yaml`] and https://example.com/src/nowhere.ts',
    "const url = base + '/src/other.ts';",
  ].join('\n');
  expect(missingPaths(commentText('src/x.ts', source), tracked, exists)).toEqual(['src/sweeps.ts', 'docs/gone.md']);
  // In Markdown every line counts.
  expect(missingPaths(commentText('README.md', 'Read `src/identities/a.ts`.'), tracked, exists)).toEqual([
    'src/identities/a.ts',
  ]);
});
