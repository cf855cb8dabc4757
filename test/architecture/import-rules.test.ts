// The layout's import rules (import-rules.cjs), checked by dependency-cruiser: the control
// plane and the agent meet only in src/contract/ and src/config.ts, pages bundle no server
// code, features enter each other by their index.ts, and no module circles back on itself. A
// forbidden import fails here, naming its rule.
import { expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runCommand } from '../support/run-command.ts';

const ROOT = join(import.meta.dir, '..', '..');
const RULES = join(import.meta.dir, 'import-rules.cjs');
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
const FRONT_DOOR = 'features-enter-by-their-front-door';

/** dependency-cruiser under Bun (it refuses Node 20, the machine's Node). */
async function cruise(cwd: string, paths: string[], options: string[] = []): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await runCommand(
    [process.execPath, DEPCRUISE, '--config', RULES, ...options, ...paths],
    {
      cwd,
    },
  );
  return { code, output: stdout + stderr };
}

test('src/, agent/ and examples/ keep every import rule', async () => {
  const { code, output } = await cruise(ROOT, ['src', 'agent', 'examples']);
  if (code !== 0) console.error(output);
  expect(output).toContain('no dependency violations found');
  expect(code).toBe(0);
}, 60_000);

test('each rule fails a tree that breaks it, naming the rule', async () => {
  const tree = mkdtempSync(join(tmpdir(), 'likeness-import-rules-'));
  try {
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({
        compilerOptions: {
          module: 'ESNext',
          moduleResolution: 'bundler',
          allowImportingTsExtensions: true,
          noEmit: true,
        },
      }),
      'src/config.ts': "import { store } from './assets/store.ts';\nexport const config = store;\n",
      'src/assets/store.ts': 'export const store = 1;\n',
      'src/sessions/start.ts': "import { job } from '../../agent/job.ts';\nexport const start = job;\n",
      'src/cli/index.ts': "import { job } from '../../agent/job.ts';\nexport const cli = job;\n",
      'agent/job.ts':
        "import { store } from '../src/assets/store.ts';\nimport { names } from '../src/contract/names.ts';\nimport { config } from '../src/config.ts';\nexport const job = [store, names, config];\n",
      'src/contract/names.ts': "import { store } from '../assets/store.ts';\nexport const names = store;\n",
      'src/console/web/page.ts':
        "import { store } from '../../assets/store.ts';\nimport type { Names } from '../../contract/types.ts';\nimport { TOPIC } from '../../contract/wire-names.ts';\nexport const page: [number, Names, string] = [store, 0, TOPIC];\n",
      'src/contract/types.ts': 'export type Names = number;\n',
      'src/contract/wire-names.ts': "export const TOPIC = 'x';\n",
      'src/identities/a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
      'src/identities/b.ts':
        "import { a } from './a.ts';\nimport { fixture } from '../../test/fixture.ts';\nexport const b = () => [a, fixture];\n",
      'test/fixture.ts': 'export const fixture = 1;\n',
      'src/identities/c.ts': "import { store } from '../assets/store.ts';\nexport const c = store;\n",
      'src/identities/d.ts':
        "import { assets } from '../assets/index.ts';\nimport { files } from '../assets/schema.ts';\nimport { a } from './a.ts';\nexport const d = [assets, files, a];\n",
      'src/assets/index.ts': 'export const assets = 1;\n',
      'src/assets/schema.ts': 'export const files = 1;\n',
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), text);
    }
    const { code, output } = await cruise(tree, ['src', 'agent']);
    expect(code).not.toBe(0);
    const broken = (rule: string, from: string, to: string) =>
      expect(output).toMatch(new RegExp(`${rule}: ${from} →\\s+${to}`));
    broken('control-plane-never-imports-agent', 'src/sessions/start.ts', 'agent/job.ts');
    broken('agent-imports-only-contract-and-config', 'agent/job.ts', 'src/assets/store.ts');
    broken('contract-is-neutral', 'src/contract/names.ts', 'src/assets/store.ts');
    broken('config-imports-only-contract', 'src/config.ts', 'src/assets/store.ts');
    broken('browser-code-bundles-no-server-code', 'src/console/web/page.ts', 'src/assets/store.ts');
    broken('code-never-imports-tests', 'src/identities/b.ts', 'test/fixture.ts');
    broken('no-circular', 'src/identities/a.ts', 'src/identities/b.ts');
    broken(FRONT_DOOR, 'src/identities/c.ts', 'src/assets/store.ts');
    // What the rules allow is not reported: the CLI starting the worker, the agent reading
    // the contract and the configuration, pages taking types and wire names.
    expect(output).not.toMatch(/src\/cli\/index\.ts →/);
    expect(output).not.toMatch(/agent\/job\.ts → src\/(contract\/names|config)\.ts/);
    expect(output).not.toMatch(/page\.ts → src\/contract\//);
    // Nor another feature's index.ts or schema.ts, nor a file of the feature's own.
    expect(output).not.toMatch(/src\/identities\/d\.ts →/);
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}, 60_000);
