// `bun install` only when package.json, bun.lock, a dependency patch (package.json's
// patchedDependencies) or the Bun version changed since the last successful install, so a warm
// start costs a hash instead of an install.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { BUN_VERSION } from './bun.mjs';
import { log, secondsSince } from './log.mjs';
import { repoRoot } from './paths.mjs';
import { runChecked } from './processes.mjs';

const markerPath = path.join(repoRoot, 'node_modules', '.likeness-installed');

function inputsHash() {
  const hash = crypto.createHash('sha256').update(`bun ${BUN_VERSION}\n`);
  // The patches package.json names (agent/patches for agents and rtc-node, src/db/patches for PGlite).
  const { patchedDependencies = {} } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  const patches = Object.values(patchedDependencies).sort();
  for (const file of ['package.json', 'bun.lock', ...patches]) {
    hash.update(`${file}\n`).update(fs.readFileSync(path.join(repoRoot, file)));
  }
  return hash.digest('hex');
}

function readMarker() {
  try {
    return fs.readFileSync(markerPath, 'utf8').trim();
  } catch {
    return null;
  }
}

export async function ensureDependencies(bunPath) {
  const wanted = inputsHash();
  if (readMarker() === wanted) return;

  const startedAt = performance.now();
  log('installing dependencies (bun install --frozen-lockfile)…');
  await runChecked(bunPath, ['install', '--frozen-lockfile'], { cwd: repoRoot });
  fs.writeFileSync(markerPath, `${wanted}\n`);
  log(`dependencies installed (${secondsSince(startedAt)})`);
}
