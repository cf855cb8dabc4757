// Debian packages the service or its suites need (Redis for the cluster suites, ffmpeg for
// voice samples), installed with apt-get once per machine when their binary is missing.
// Two bootstraps must not run apt-get at once (dpkg's own lock would fail the second).
import fs from 'node:fs';
import path from 'node:path';
import { withInstallLock } from './install-lock.mjs';
import { log, secondsSince } from './log.mjs';
import { cacheDir } from './paths.mjs';
import { run, runChecked, runSync } from './processes.mjs';

/**
 * Installs `pkg` when `binary` is missing; returns the binary's path. `purpose` says who needs
 * it (for the error where there is no apt-get); `afterInstall` runs once after installing.
 */
export async function ensureDebianPackage({ binary, pkg, purpose, afterInstall }) {
  if (fs.existsSync(binary)) return binary;
  await withInstallLock(path.join(cacheDir(), `${pkg}.lock`), pkg, async () => {
    if (fs.existsSync(binary)) return;
    if (runSync('apt-get', ['--version']).status !== 0)
      throw new Error(`${purpose} needs ${binary}; install Debian's ${pkg} package (no apt-get here)`);
    const startedAt = performance.now();
    log(`${binary} not found: installing the ${pkg} package with apt-get (once per machine)…`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const args = ['install', '-y', '-q', '--no-install-recommends', pkg];
    // The package lists may be missing or stale (a fresh container): update once and retry.
    if ((await run('apt-get', args, { env })) !== 0) {
      await runChecked('apt-get', ['update', '-q'], { env });
      await runChecked('apt-get', args, { env });
    }
    await afterInstall?.(env);
    log(`${pkg} installed (${secondsSince(startedAt)})`);
  });
  return binary;
}
