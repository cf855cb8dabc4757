// The configuration's source text: src/config.ts and every part of it in src/config/, where
// the deploy tests look for the variables the deployment files set.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..', '..');

export function configSource(): string {
  const parts = readdirSync(join(ROOT, 'src/config'))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join('src/config', name));
  return ['src/config.ts', ...parts].map((path) => readFileSync(join(ROOT, path), 'utf8')).join('\n');
}
