// Child processes of the bootstrap. Every running child is tracked so that a signal
// sent to the bootstrap (Ctrl-C, a CI timeout's SIGTERM) reaches it too, and so the
// bootstrap can finish its own cleanup (the throwaway Postgres) before exiting.

import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';

const liveChildren = new Set();
let receivedSignal = null;

/** The first SIGINT/SIGTERM/SIGHUP received, or null. */
export function interruption() {
  return receivedSignal;
}

/** Installs handlers that forward termination signals to live children instead of dying at once. */
export function forwardSignalsToChildren() {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      receivedSignal ??= signal;
      for (const child of liveChildren) child.kill(signal);
    });
  }
}

/** Shell-style exit status: the child's code, or 128 + signal number when a signal killed it. */
export function exitStatus(code, signal) {
  if (code !== null) return code;
  return 128 + (os.constants.signals[signal] ?? 1);
}

/**
 * Spawns a child and resolves with its exit status. By default its stdout goes to our
 * stderr (installers print progress, not results); `stdout: "inherit"` keeps it on
 * stdout, and `onStdout`/`onStderr` switch a stream to a pipe read by the caller.
 */
export function run(command, args, { cwd, env, uid, gid, stdin = 'ignore', stdout = 2, onStdout, onStderr } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: env ?? process.env,
      uid,
      gid,
      stdio: [stdin, onStdout ? 'pipe' : stdout, onStderr ? 'pipe' : 2],
    });
    liveChildren.add(child);
    if (onStdout) child.stdout.on('data', onStdout);
    if (onStderr) child.stderr.on('data', onStderr);
    child.on('error', (error) => {
      liveChildren.delete(child);
      reject(new Error(`could not run ${command}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      liveChildren.delete(child);
      resolve(exitStatus(code, signal));
    });
  });
}

/** Like run(), but a non-zero exit is an error. */
export async function runChecked(command, args, options) {
  const status = await run(command, args, options);
  if (status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${status}`);
}

/**
 * `npm install` of `packages` into a folder of their own (`--prefix`), saving and auditing
 * nothing. `npm test --silent` exports npm_config_loglevel=silent, which would hide npm's errors
 * here too: they are asked for explicitly (its warnings are only noise here).
 */
export function npmInstallInto(prefix, packages, flags = []) {
  return runChecked('npm', [
    'install',
    '--no-save',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
    ...flags,
    '--prefix',
    prefix,
    ...packages,
  ]);
}

/** Synchronous, captured run for quick probes (versions, user ids, access checks). */
export function runSync(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
  return { status: result.error ? null : result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

/** A loopback port nothing listens on right now (the OS picks it). */
export function freeLoopbackPort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** True while a process with this pid exists (EPERM: it exists, as another user's). */
export function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}
