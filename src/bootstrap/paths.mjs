// Where things live: the repo this file belongs to, and the per-machine cache.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function cacheDir() {
  return path.resolve(process.env.LIKENESS_CACHE_DIR || path.join(os.homedir(), '.cache', 'likeness'));
}
