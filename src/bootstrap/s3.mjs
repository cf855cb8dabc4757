// A throwaway S3 server for the test suites: moto's server mode (PyPI `moto`, the
// `moto_server` command), which speaks the S3 HTTP API in memory. It is installed once
// into a venv in the machine's cache, started on a free loopback port for one test run
// and stopped afterwards; its buckets vanish with it.
//
// Only the S3 backend's dependencies are installed (`moto[s3]` plus Flask and
// flask-cors, which is what `moto[server]` adds for the HTTP server): the full server
// extra pulls in the dependencies of every AWS service (cfn-lint, sympy, docker, …) and
// triples the cold install for nothing S3 needs.
//
// Like the throwaway Postgres, the server is a direct child of the bootstrap, reaped
// here. It also watches its parent and exits if the bootstrap dies without cleaning up
// (SIGKILL), so it never outlives the run holding its port.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { withInstallLock } from './install-lock.mjs';
import { log, secondsSince } from './log.mjs';
import { cacheDir } from './paths.mjs';
import { freeLoopbackPort, interruption, runChecked, runSync } from './processes.mjs';

export const MOTO_VERSION = '5.2.5';
/**
 * Pinned top-level requirements; pip resolves their dependencies for this Python. The venv
 * is the suites' Python (LIKENESS_TEST_PYTHON): prometheus-client parses /metrics with
 * Prometheus' own text parser, openapi-spec-validator checks /openapi.json, schemathesis
 * fuzzes the running API against it.
 */
const REQUIREMENTS = [
  `moto[s3]==${MOTO_VERSION}`,
  'flask==3.1.3',
  'flask-cors==6.0.5',
  'prometheus-client==0.26.0',
  'openapi-spec-validator==0.9.0',
  'schemathesis==4.32.5',
];
const MIN_PYTHON = [3, 10]; // moto 5.2 needs 3.10
const READY_TIMEOUT_MS = 60_000; // the first start compiles moto's modules
const STOP_TIMEOUT_MS = 5_000;
const KEPT_LOG_BYTES = 16 * 1024;

// Runs moto_server's own entry point after starting a thread that ends the process
// once its parent (the bootstrap, or a test's customer bucket) is gone: then getppid() changes
// to a reaper's pid.
export const MOTO_LAUNCHER = `
import os, sys, threading, time
parent = os.getppid()
def watch_parent():
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
threading.Thread(target=watch_parent, daemon=True).start()
from moto.server import main
main(sys.argv[1:])
`;

const FIND_MOTO = "import importlib.util, sys; sys.exit(importlib.util.find_spec('moto') is None)";

function venvDir() {
  return path.join(cacheDir(), 'moto-venv');
}

/** The Python of the venv moto is installed in. */
export function venvPython() {
  return path.join(venvDir(), 'bin', 'python');
}

function markerPath() {
  return path.join(venvDir(), '.likeness-installed');
}

/** What the venv was built from: a change of pins or of the base Python rebuilds it. */
function wantedMarker(python) {
  return crypto
    .createHash('sha256')
    .update(`${python.executable}\n${python.version}\n${REQUIREMENTS.join('\n')}\n`)
    .digest('hex');
}

function readMarker() {
  try {
    return fs.readFileSync(markerPath(), 'utf8').trim();
  } catch {
    return null;
  }
}

/** The base python3: { executable, version, hasVenv }, or null when there is none. */
function probePython() {
  const probe = runSync('python3', [
    '-c',
    [
      'import sys, json',
      'try:\n import ensurepip, venv\n ok = True\nexcept ImportError:\n ok = False',
      "print(json.dumps({'executable': sys.executable, 'version': list(sys.version_info[:3]), 'hasVenv': ok}))",
    ].join('\n'),
  ]);
  if (probe.status !== 0) return null;
  try {
    return JSON.parse(probe.stdout.trim().split('\n').pop());
  } catch {
    return null;
  }
}

/**
 * A python3 that can create venvs. Debian ships venv support (ensurepip) in a separate
 * package, so when it or Python itself is missing, apt-get installs them, as for Postgres.
 */
async function ensurePython() {
  let python = probePython();
  if (!python?.hasVenv) {
    if (runSync('apt-get', ['--version']).status !== 0) {
      throw new Error(
        python ? 'python3 cannot create venvs (install python3-venv)' : 'python3 is required for the S3 tests (moto)',
      );
    }
    const startedAt = performance.now();
    log(`${python ? 'python3-venv' : 'python3'} not found: installing it with apt-get (once per machine)…`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await runChecked('apt-get', ['update', '-q'], { env });
    await runChecked('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'python3', 'python3-venv'], { env });
    python = probePython();
    if (!python?.hasVenv) throw new Error('apt-get installed python3-venv, but python3 still cannot create venvs');
    log(`python3 ready (${secondsSince(startedAt)})`);
  }
  const [major, minor] = python.version;
  if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
    throw new Error(
      `moto ${MOTO_VERSION} needs Python ${MIN_PYTHON.join('.')}+, python3 is ${python.version.join('.')}`,
    );
  }
  return python;
}

/** Installs moto into its venv unless that venv already holds exactly these pins; returns the venv's python. */
export async function ensureMotoInstalled() {
  const python = await ensurePython();
  const wanted = wantedMarker(python);
  // A cheap look (importing moto takes over a second): the venv's interpreter runs and finds moto.
  const installed = () => readMarker() === wanted && runSync(venvPython(), ['-c', FIND_MOTO]).status === 0;
  if (installed()) return venvPython();
  await withInstallLock(`${venvDir()}.lock`, 'moto', async () => {
    if (!installed()) await installMoto(wanted); // another bootstrap may have done it meanwhile
  });
  return venvPython();
}

async function installMoto(wanted) {
  const startedAt = performance.now();
  log(`installing moto ${MOTO_VERSION} (S3 server for the tests) into ${venvDir()}…`);
  fs.rmSync(venvDir(), { recursive: true, force: true });
  await runChecked('python3', ['-m', 'venv', venvDir()]);
  // --no-compile: modules are compiled when first imported, and only those moto uses.
  // -q: pip still prints its warnings and errors.
  await runChecked(venvPython(), [
    '-m',
    'pip',
    'install',
    '-q',
    '--no-compile',
    '--disable-pip-version-check',
    '--no-input',
    '--progress-bar',
    'off',
    ...REQUIREMENTS,
  ]);
  if (runSync(venvPython(), ['-c', 'import moto.server']).status !== 0) {
    throw new Error(`after pip install, ${venvPython()} cannot import moto.server`);
  }
  // Written last: an interrupted install is redone from scratch next time.
  fs.writeFileSync(markerPath(), `${wanted}\n`);
  log(`moto ${MOTO_VERSION} installed (${secondsSince(startedAt)})`);
}

/** True once something answers HTTP at the url. */
async function answersHttp(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts moto_server on the port; resolves with { child, exited, output } once it answers
 * HTTP, rejects if it exits first (e.g. the port was taken meanwhile) or takes too long.
 */
async function startServer(python, port) {
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-KEPT_LOG_BYTES);
  };
  const child = spawn(python, ['-c', MOTO_LAUNCHER, '-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Unbuffered, so a crash's traceback reaches us whole.
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  // Drained for the whole run (a full pipe would block the server); only the tail is kept.
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let running = true;
  const exited = new Promise((resolve) => {
    child.once('close', () => resolve((running = false)));
    child.once('error', (error) => {
      keep(`could not run ${python}: ${error.message}\n`);
      resolve((running = false));
    });
  });

  const url = `http://127.0.0.1:${port}/moto-api/`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (running) {
    if (await answersHttp(url)) {
      if (running) return { child, exited, output: () => output };
      break;
    }
    if (Date.now() > deadline || interruption()) {
      child.kill('SIGKILL');
      await exited;
      throw new Error(
        interruption()
          ? `interrupted by ${interruption()}`
          : `moto_server did not answer within ${READY_TIMEOUT_MS / 1000}s:\n${output.trimEnd()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await exited;
  throw new Error(`moto_server exited during startup:\n${output.trimEnd().split('\n').slice(-20).join('\n')}`);
}

/**
 * Starts moto_server on a free loopback port. Returns { endpoint, stop }: stop() ends
 * the server; it is idempotent, and a synchronous fallback kills it at process exit.
 */
export async function startThrowawayS3(python) {
  const startedAt = performance.now();
  let server = null;
  const serverRunning = () => server && server.child.exitCode === null && server.child.signalCode === null;
  const killNow = () => {
    if (serverRunning()) server.child.kill('SIGKILL');
  };
  process.on('exit', killNow);
  let stopped = false;
  const stop = async () => {
    if (stopped || !server) return;
    stopped = true;
    if (serverRunning()) {
      server.child.kill('SIGTERM'); // moto exits at once on SIGTERM; its data is in memory
      const timer = setTimeout(killNow, STOP_TIMEOUT_MS);
      await server.exited;
      clearTimeout(timer);
    }
    process.off('exit', killNow);
    log('stopped the throwaway S3 server');
  };

  log('starting a throwaway S3 server (moto)…');
  // The port is free when picked but could be taken before moto binds it: retry.
  let port;
  for (let attempt = 1; !server; attempt++) {
    port = await freeLoopbackPort();
    try {
      server = await startServer(python, port);
    } catch (error) {
      if (attempt === 3 || interruption()) throw error;
    }
  }
  const endpoint = `http://127.0.0.1:${port}`;
  log(`S3 (moto ${MOTO_VERSION}) ready at ${endpoint} (${secondsSince(startedAt)})`);
  return { endpoint, stop };
}
