// Redis for the cluster suites (test/cluster): Debian's redis-server, which LiveKit's
// multi-node mode needs (nodes share rooms, dispatches and the signalling relay through it).
// The suites start their own throwaway servers on free ports; nothing runs as a service.
import { ensureDebianPackage } from './debian-packages.mjs';
import { run } from './processes.mjs';

export const REDIS_SERVER = '/usr/bin/redis-server';

/** Installs Debian's redis-server when missing; returns the binary's path. */
export function ensureRedisInstalled() {
  return ensureDebianPackage({
    binary: REDIS_SERVER,
    pkg: 'redis-server',
    purpose: 'the cluster tests',
    // The package starts a system-wide server; the suites start their own.
    afterInstall: (env) => run('service', ['redis-server', 'stop'], { env }).catch(() => undefined),
  });
}
