// Bun comes from the npm registry (the `bun` package's platform optional dependency
// ships the binary), installed into a versioned folder of the machine's cache.
import fs from 'node:fs';
import path from 'node:path';
import { log, secondsSince } from './log.mjs';
import { cacheDir } from './paths.mjs';
import { npmInstallInto, runSync } from './processes.mjs';

export const BUN_VERSION = '1.4.4';

function installedVersion(bunPath) {
  if (!fs.existsSync(bunPath)) return null;
  return runSync(bunPath, ['--version']).stdout.trim() || null;
}

/** Installs Bun if needed, puts its folder first on PATH for children, returns the bun path. */
export async function ensureBun() {
  const prefix = path.join(cacheDir(), `bun-${BUN_VERSION}`);
  const binDir = path.join(prefix, 'node_modules', '.bin');
  const bunPath = path.join(binDir, 'bun');

  if (installedVersion(bunPath) !== BUN_VERSION) {
    const startedAt = performance.now();
    log(`installing Bun ${BUN_VERSION} from npm into ${prefix}…`);
    fs.mkdirSync(prefix, { recursive: true });
    await npmInstallInto(prefix, [`bun@${BUN_VERSION}`]);
    const version = installedVersion(bunPath);
    if (version !== BUN_VERSION) {
      throw new Error(
        `after npm install, ${bunPath} reports version ${JSON.stringify(version)}, expected ${BUN_VERSION}`,
      );
    }
    log(`Bun ${BUN_VERSION} installed (${secondsSince(startedAt)})`);
  }

  process.env.PATH = [binDir, process.env.PATH].filter(Boolean).join(path.delimiter);
  return bunPath;
}
