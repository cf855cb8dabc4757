// The control plane's process: opens the services (services.ts), serves the app (app.ts) on
// HTTP and HTTPS, runs the periodic work (sweeps.ts). `startService` is what `likeness serve` runs.
import { chmod, mkdir } from 'node:fs/promises';
import { removeServiceRecord, runningService, writeServiceRecord } from './admin/service-record.ts';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { recoverIdentities } from './identities/recovery.ts';
import { log } from './logging/index.ts';
import { openServices, type ServiceOverrides, type Services } from './services.ts';
import { startPeriodicWork } from './sweeps.ts';
import { listenSecurely, type SecureListener } from './tls/index.ts';

export { buildApp } from './app.ts';
export { openServices, type ServiceOverrides, type Services } from './services.ts';

export interface RunningService {
  services: Services;
  url: string;
  /** The HTTPS listener (TLS_PORT), when there is one. */
  secure?: SecureListener;
  stop(): Promise<void>;
}

export async function startService(config: Config, overrides: ServiceOverrides = {}): Promise<RunningService> {
  if (!config.databaseUrl && !overrides.database) {
    // PGlite belongs to one process: a second one on the same folder would corrupt it.
    const running = await runningService(config);
    if (running)
      throw new Error(
        `Another Likeness service (pid ${running.pid}) is using ${config.dataDir}; stop it or choose another DATA_DIR`,
      );
  }
  // DATA_DIR holds people's faces and voices and the embedded database: this user's only.
  // Every folder and file the service makes from here on is too (the umask), PGlite's and
  // the local LiveKit's included.
  process.umask(0o077);
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  await chmod(config.dataDir, 0o700);
  const services = await openServices(config, overrides);
  const recoveryDeps = {
    db: services.database.db,
    store: services.store,
    retraining: services.retraining,
    voices: services.voices,
  };
  const recover = async (options: { graceSeconds: number; ignoreLeases?: boolean }) => {
    const recovered = await recoverIdentities(recoveryDeps, options);
    if (recovered.discarded || recovered.resumed) {
      log.info(
        { discarded: recovered.discarded, resumed: recovered.resumed },
        'recovery: removed unfinished identities, resumed retrains',
      );
    }
  };
  // One embedded process owns its PGlite: nothing else can be mid-create, so sweep at once.
  const embedded = services.database.engine === 'pglite';
  await recover({ graceSeconds: embedded ? 0 : config.recoveryGraceSeconds, ignoreLeases: embedded });
  let app: ReturnType<typeof buildApp>;
  try {
    app = buildApp(services).listen({ port: config.port, hostname: config.host });
  } catch (error) {
    await services.localLivekit?.stop();
    await services.database.close();
    throw error;
  }
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${app.server!.port}`;
  let secure: SecureListener | undefined;
  try {
    secure = config.tls ? await listenSecurely(app, config, config.tls) : undefined;
  } catch (error) {
    await app.stop(true);
    await services.localLivekit?.stop();
    await services.database.close();
    throw error;
  }
  await writeServiceRecord(config, { pid: process.pid, url });
  services.webhooks.start();
  services.eventLoop.start();
  const periodic = startPeriodicWork(services, config, {
    recovery: () => recover({ graceSeconds: config.recoveryGraceSeconds }),
  });
  return {
    services,
    url,
    secure,
    async stop() {
      periodic.stop();
      services.eventLoop.stop();
      // Not forced: requests in flight finish (a create mid-training completes) before the database
      // closes. The signalling WebSockets, which would hold that wait as long as their sessions,
      // are closed first: their clients reconnect (to another API process, where there is one).
      services.signalling.closeAll();
      await Promise.all([app.stop(false), secure?.stop()]);
      await services.webhooks.stop();
      await services.localLivekit?.stop();
      await services.retraining.idle();
      await services.trainingUpgrades.idle();
      await services.knowledge.close();
      await removeServiceRecord(config);
      await services.database.close();
    },
  };
}
