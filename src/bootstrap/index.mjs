#!/usr/bin/env node
// Entry of `npm start` and `npm test` (plain Node, no dependencies): it installs what
// the project needs on this machine (Bun, node_modules, the LiveKit server, Postgres,
// moto, Chromium and Redis for the tests) idempotently, then hands over to Bun.
//
//   node src/bootstrap/index.mjs start [args…]   bun src/cli/index.ts serve [args…]
//   node src/bootstrap/index.mjs test [args…]    bun test [args…] against a throwaway Postgres and S3
//   node src/bootstrap/index.mjs likeness [args…] bun src/cli/index.ts [args…] (operator CLI)
//   node src/bootstrap/index.mjs bench FILE [args…]  bun FILE [args…] beside a throwaway Postgres, S3 and Redis
import { ensureBun } from './bun.mjs';
import { ensureChromium } from './chromium.mjs';
import { ensureDependencies } from './dependencies.mjs';
import { ensureFfmpegInstalled } from './ffmpeg.mjs';
import { ensureHelm, runsHelmSuite } from './helm.mjs';
import { ensureLivekitServer } from './livekit.mjs';
import { log } from './log.mjs';
import { allProvidersInCloud, ensureOfflineModels } from './models.mjs';
import { repoRoot } from './paths.mjs';
import { ensurePostgresInstalled, startThrowawayPostgres } from './postgres.mjs';
import { raiseTestPriority } from './priority.mjs';
import { exitStatus, forwardSignalsToChildren, interruption, run } from './processes.mjs';
import { ensureRedisInstalled } from './redis.mjs';
import { ensureMotoInstalled, startThrowawayS3 } from './s3.mjs';
import { memoryScratchFolder, removeScratchFolder } from './scratch.mjs';
import { runBunTest, summaryLine } from './test-run.mjs';

function stopIfInterrupted() {
  const signal = interruption();
  if (signal) throw new Error(`interrupted by ${signal}`);
}

async function start(args) {
  const bunPath = await ensureBun();
  await ensureDependencies(bunPath);
  stopIfInterrupted();
  // Embedded default: without LIVEKIT_URL the service starts a LiveKit server of its own.
  const livekitBin = process.env.LIVEKIT_URL ? undefined : await ensureLivekitServer();
  stopIfInterrupted();
  await ensureFfmpegInstalled(); // voice samples are decoded with it
  stopIfInterrupted();
  // Whatever has no cloud key runs on the offline models (exports LIKENESS_MODELS_DIR).
  if (!allProvidersInCloud()) await ensureOfflineModels();
  stopIfInterrupted();
  // --no-orphans: the server goes down with the bootstrap, even if that is SIGKILLed.
  return run(bunPath, ['--no-orphans', 'src/cli/index.ts', 'serve', ...args], {
    cwd: repoRoot,
    env: livekitBin ? { ...process.env, LIKENESS_LIVEKIT_BIN: livekitBin } : process.env,
    stdin: 'inherit',
    stdout: 'inherit',
  });
}

/** The operator CLI: stdout carries only its JSON lines (installers print to stderr). */
async function likeness(args) {
  const bunPath = await ensureBun();
  await ensureDependencies(bunPath);
  stopIfInterrupted();
  return run(bunPath, ['src/cli/index.ts', ...args], { cwd: repoRoot, stdin: 'inherit', stdout: 'inherit' });
}

function raiseAndTellTestPriority() {
  const priority = raiseTestPriority();
  if (priority.nice < 0)
    log(
      priority.raised.length > 0
        ? `the suites run at nice ${priority.nice}: their real-time checks go ahead of other busy processes`
        : `could not raise the suites' priority (needs root or CAP_SYS_NICE): real-time checks may fail beside other busy processes`,
    );
}

async function test(args) {
  let cluster = null;
  let s3 = null;
  let scratch = null;
  let exitCode;
  let line;
  raiseAndTellTestPriority();
  try {
    const bunPath = await ensureBun();
    await ensureDependencies(bunPath);
    stopIfInterrupted();
    // Helm is built from Go the first time (minutes of both cores): here, beside the other
    // installs, not inside the suites where its compile ran beside their real-time checks. A
    // failure is the Helm suite's to report (it asks again).
    const helmBuilt = runsHelmSuite(args)
      ? ensureHelm().catch((error) => log(`Helm could not be built now: ${error.message}`))
      : Promise.resolve();
    const livekitBin = await ensureLivekitServer();
    stopIfInterrupted();
    const pgBinDir = await ensurePostgresInstalled();
    stopIfInterrupted();
    const motoPython = await ensureMotoInstalled();
    stopIfInterrupted();
    const chromiumPath = await ensureChromium();
    stopIfInterrupted();
    const redisServer = await ensureRedisInstalled();
    stopIfInterrupted();
    await ensureFfmpegInstalled();
    stopIfInterrupted();
    await ensureOfflineModels(); // exports LIKENESS_MODELS_DIR to the suites
    stopIfInterrupted();
    await helmBuilt;
    stopIfInterrupted();
    // Both servers start at once; if one fails, the other is still stopped below.
    const [pg, s3Server] = await Promise.allSettled([startThrowawayPostgres(pgBinDir), startThrowawayS3(motoPython)]);
    cluster = pg.value ?? null;
    s3 = s3Server.value ?? null;
    for (const started of [pg, s3Server]) if (started.status === 'rejected') throw started.reason;
    stopIfInterrupted();

    scratch = memoryScratchFolder();
    if (scratch) log(`the suites' temporary files go to ${scratch} (a memory filesystem)`);
    const result = await runBunTest(bunPath, args, {
      ...process.env,
      ...(scratch ? { TMPDIR: scratch } : {}),
      LIKENESS_LIVEKIT_BIN: livekitBin,
      LIKENESS_CHROMIUM: chromiumPath,
      LIKENESS_REDIS_SERVER: redisServer,
      TEST_DATABASE_URL: cluster.url,
      TEST_S3_ENDPOINT: s3.endpoint,
      LIKENESS_TEST_PYTHON: motoPython,
    });
    line = summaryLine(result.counts, result.exitCode);
    // No summary means bun died mid-run: that is a failure whatever its exit code says.
    exitCode = result.counts ? result.exitCode : result.exitCode || 1;
  } catch (error) {
    log(`the test run could not complete: ${error.message}`);
    line = summaryLine(null);
    const signal = interruption();
    exitCode = signal ? exitStatus(null, signal) : 1;
  } finally {
    await Promise.all([cluster?.stop(), s3?.stop()]);
    removeScratchFolder(scratch);
  }
  // Last line of all output: CI reads it.
  process.stdout.write(`${line}\n`);
  return exitCode;
}

/**
 * A bench script (bench/…) with what the suites get: the LiveKit binary, the offline models,
 * a throwaway Postgres and S3 server (TEST_DATABASE_URL, TEST_S3_ENDPOINT) and Redis.
 */
async function bench(args) {
  let cluster = null;
  let s3 = null;
  try {
    const bunPath = await ensureBun();
    await ensureDependencies(bunPath);
    const livekitBin = await ensureLivekitServer();
    const [pgBinDir, motoPython, redisServer] = [
      await ensurePostgresInstalled(),
      await ensureMotoInstalled(),
      await ensureRedisInstalled(),
    ];
    await ensureFfmpegInstalled();
    await ensureOfflineModels();
    stopIfInterrupted();
    [cluster, s3] = await Promise.all([startThrowawayPostgres(pgBinDir), startThrowawayS3(motoPython)]);
    return await run(bunPath, args, {
      cwd: repoRoot,
      stdout: 'inherit',
      env: {
        ...process.env,
        LIKENESS_LIVEKIT_BIN: livekitBin,
        LIKENESS_REDIS_SERVER: redisServer,
        TEST_DATABASE_URL: cluster.url,
        TEST_S3_ENDPOINT: s3.endpoint,
        LIKENESS_TEST_PYTHON: motoPython,
      },
    });
  } finally {
    await Promise.all([cluster?.stop(), s3?.stop()]);
  }
}

const modes = { start, test, likeness, bench };
const [mode, ...args] = process.argv.slice(2);

if (!modes[mode]) {
  process.stderr.write('usage: node src/bootstrap/index.mjs start|test|likeness|bench [args…]\n');
  process.exit(2);
}
forwardSignalsToChildren();
try {
  process.exit(await modes[mode](args));
} catch (error) {
  log(`${mode} failed: ${error.message}`);
  process.exit(interruption() ? exitStatus(null, interruption()) : 1);
}
