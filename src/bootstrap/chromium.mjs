// Headless Chromium for the browser tests: Debian's `chromium` package, driven by
// playwright-core (never a browser Playwright downloads). A font comes with it, so that
// pages render readable text in screenshots even on a machine that had no fonts at all.
import fs from 'node:fs';
import path from 'node:path';
import { withInstallLock } from './install-lock.mjs';
import { log, secondsSince } from './log.mjs';
import { cacheDir } from './paths.mjs';
import { run, runChecked, runSync } from './processes.mjs';

export const CHROMIUM_PATH = '/usr/bin/chromium';
const FONT_FILE = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'; // from fonts-dejavu-core
const PACKAGES = ['chromium', 'fonts-dejavu-core'];

function installed() {
  return fs.existsSync(CHROMIUM_PATH) && fs.existsSync(FONT_FILE);
}

/** Installs Debian's chromium (and a font) when missing; returns the executable's path. */
export async function ensureChromium() {
  if (installed()) return CHROMIUM_PATH;
  // Two bootstraps must not run apt-get at once (dpkg's own lock would fail the second).
  await withInstallLock(path.join(cacheDir(), 'chromium.lock'), 'Chromium', async () => {
    if (!installed()) await installChromium(); // another bootstrap may have done it meanwhile
  });
  return CHROMIUM_PATH;
}

async function installChromium() {
  if (runSync('apt-get', ['--version']).status !== 0) {
    throw new Error(`the browser tests need ${PACKAGES.join(', ')}; install them (no apt-get here)`);
  }
  const startedAt = performance.now();
  log('Chromium not found: installing the chromium package with apt-get (once per machine)…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const args = ['install', '-y', '-q', '--no-install-recommends', ...PACKAGES];
  // The package lists may be missing or stale (a fresh container): update once and retry.
  if ((await run('apt-get', args, { env })) !== 0) {
    await runChecked('apt-get', ['update', '-q'], { env });
    await runChecked('apt-get', args, { env });
  }
  const version = runSync(CHROMIUM_PATH, ['--version']);
  if (version.status !== 0)
    throw new Error(`apt-get installed chromium, but ${CHROMIUM_PATH} --version fails: ${version.stderr.trim()}`);
  log(`${version.stdout.trim()} installed at ${CHROMIUM_PATH} (${secondsSince(startedAt)})`);
}
