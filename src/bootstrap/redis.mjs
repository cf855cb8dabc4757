// Redis for the cluster suites (test/cluster): Debian's redis-server, which LiveKit's
// multi-node mode needs (nodes share rooms, dispatches and the signalling relay through it).
// The suites start their own throwaway servers on free ports; nothing runs as a service.
import fs from "node:fs";
import path from "node:path";
import { withInstallLock } from "./install-lock.mjs";
import { log, secondsSince } from "./log.mjs";
import { cacheDir } from "./paths.mjs";
import { run, runChecked, runSync } from "./processes.mjs";

export const REDIS_SERVER = "/usr/bin/redis-server";

/** Installs Debian's redis-server when missing; returns the binary's path. */
export async function ensureRedisInstalled() {
  if (fs.existsSync(REDIS_SERVER)) return REDIS_SERVER;
  // Two bootstraps must not run apt-get at once (dpkg's own lock would fail the second).
  await withInstallLock(path.join(cacheDir(), "redis.lock"), "Redis", async () => {
    if (fs.existsSync(REDIS_SERVER)) return;
    if (runSync("apt-get", ["--version"]).status !== 0) throw new Error("the cluster tests need redis-server; install it (no apt-get here)");
    const startedAt = performance.now();
    log("Redis not found: installing the redis-server package with apt-get (once per machine)…");
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    const args = ["install", "-y", "-q", "--no-install-recommends", "redis-server"];
    // The package lists may be missing or stale (a fresh container): update once and retry.
    if ((await run("apt-get", args, { env })) !== 0) {
      await runChecked("apt-get", ["update", "-q"], { env });
      await runChecked("apt-get", args, { env });
    }
    // The package starts a system-wide server; the suites start their own.
    await run("service", ["redis-server", "stop"], { env }).catch(() => undefined);
    log(`redis-server installed (${secondsSince(startedAt)})`);
  });
  return REDIS_SERVER;
}
