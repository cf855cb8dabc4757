// The control plane: its services (database, asset store, ledger, pipelines) and the
// Elysia app that serves them. `startService` is what `likeness serve` runs.
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Elysia } from 'elysia';
import packageJson from '../package.json' with { type: 'json' };
import { adminDoor, adminRoutes } from './admin/index.ts';
import { databaseOperations, type Operations } from './admin/operations.ts';
import { adminTokenFor, removeServiceRecord, runningService, writeServiceRecord } from './admin/service-record.ts';
import { assetRoutes } from './assets/index.ts';
import { AssetLinks } from './assets/links.ts';
import { type AssetStore, createAssetStore } from './assets/store.ts';
import { type Audience, accountOf, CONSOLE_API, credentialsBeforeBodies, PUBLIC_API } from './auth/index.ts';
import type { Config } from './config.ts';
import { CONSOLE_OPEN_PATHS, consoleRoutes } from './console/index.ts';
import { creditRoutes } from './credits/index.ts';
import { CreditLedger } from './credits/ledger.ts';
import { type DatabaseHandle, openDatabase, pgliteDirFor } from './db/index.ts';
import { EMBED_START_PATH, embedRoutes } from './embed/index.ts';
import { healthRoutes, Readiness } from './health/index.ts';
import { bodyParsers } from './http/body.ts';
import { clientAddresses } from './http/client-addresses.ts';
import { ApiError, httpErrors } from './http/errors.ts';
import { finishedRequests } from './http/finished-requests.ts';
import { refuseUnstorableText } from './http/unstorable-text.ts';
import { identityRoutes } from './identities/index.ts';
import { trainingAttempts } from './identities/limits.ts';
import { recoverIdentities } from './identities/recovery.ts';
import { Retraining } from './identities/retraining.ts';
import { TrainingUpgrades } from './identities/training-upgrades.ts';
import { documentRoutes, KnowledgeService, knowledgeRoutes } from './knowledge/index.ts';
import { connectLivekit, httpUrlOf, type LivekitConnection } from './livekit/connection.ts';
import { LocalLivekitServer, livekitBinary } from './livekit/index.ts';
import { signalProxy } from './livekit/signal-proxy.ts';
import { log, logRequest } from './logging/index.ts';
import { defaultMediaLimits, type MediaLimits } from './media/index.ts';
import { countRequest, metricsRoutes } from './metrics/index.ts';
import { apiDocs } from './openapi/index.ts';
import { pipelineRoutes } from './pipelines/index.ts';
import { loadPipelines, type PipelineRegistry } from './pipelines/registry.ts';
import { publishableKeyRoutes } from './publishable-keys/index.ts';
import { AgentWatch } from './sessions/agent-watch.ts';
import { SessionBilling } from './sessions/billing.ts';
import { sessionRoutes } from './sessions/index.ts';
import { jobReportDoor, jobReportRoutes } from './sessions/job-reports.ts';
import { SessionLifecycle } from './sessions/lifecycle.ts';
import { LIVEKIT_WEBHOOK_PATH, livekitWebhookDoor, livekitWebhookRoutes } from './sessions/livekit-webhooks.ts';
import { sessionOrderRoutes } from './sessions/orders.ts';
import { startPeriodicWork } from './sweeps.ts';
import { listenSecurely, type SecureListener } from './tls/index.ts';
import { toolCallRoutes, toolRoutes } from './tools/index.ts';
import { Voices, voiceRoutes } from './voices/index.ts';
import { warmUp } from './warm-up.ts';
import type { Resolver } from './webhooks/destinations.ts';
import { WebhookSender, webhookRoutes } from './webhooks/index.ts';
import { heartbeatDoor, workerRoutes } from './workers/index.ts';

export interface Services {
  config: Config;
  /** What /readyz checks: the database, LiveKit, and the warm-up; the CLI adds the worker beside it. */
  readiness: Readiness;
  database: DatabaseHandle;
  store: AssetStore;
  ledger: CreditLedger;
  pipelines: PipelineRegistry;
  retraining: Retraining;
  /** Identities trained by an older version of their pipeline's training, trained again in the background. */
  trainingUpgrades: TrainingUpgrades;
  mediaLimits: MediaLimits;
  /** Preset voices and cloning (ElevenLabs when configured). */
  voices: Voices;
  operations: Operations;
  adminToken: string;
  /** Signed, expiring links to stored assets (src/assets/links.ts). */
  assetLinks: AssetLinks;
  billing: SessionBilling;
  lifecycle: SessionLifecycle;
  /** Dispatches again sessions whose agent was lost or never answered (needs the workers' heartbeats). */
  agentWatch: AgentWatch;
  livekit: LivekitConnection;
  /** Sends the customers' webhooks from the outbox (started by startService). */
  webhooks: WebhookSender;
  /** How webhook hosts are resolved (the system's DNS unless a test plays one). */
  webhookResolver?: Resolver;
  /** The documents' embedder and background processing (src/knowledge). */
  knowledge: KnowledgeService;
  /** The LiveKit server this process started (embedded mode), stopped with the service. */
  localLivekit?: LocalLivekitServer;
}

export interface ServiceOverrides {
  database?: DatabaseHandle;
  store?: AssetStore;
  pipelines?: PipelineRegistry;
  mediaLimits?: MediaLimits;
  /** Use this LiveKit instead of LIVEKIT_URL or a local server. */
  livekit?: LivekitConnection;
  /** Resolve webhook hosts with this instead of the system's DNS. */
  webhookResolver?: Resolver;
}

/** LiveKit as configured: an external server, or (embedded default) one this process starts. */
async function openLivekit(config: Config): Promise<{ connection: LivekitConnection; local?: LocalLivekitServer }> {
  const { url, apiKey, apiSecret, publicUrl } = config.livekit;
  if (url) {
    if (!apiKey || !apiSecret) throw new Error('LIVEKIT_URL needs LIVEKIT_API_KEY and LIVEKIT_API_SECRET');
    return { connection: connectLivekit({ url, apiKey, apiSecret, publicUrl: publicUrl ?? url }) };
  }
  const { nodeIp, udpPorts, tcpPort } = config.livekit.media;
  const local = await LocalLivekitServer.start({
    binary: livekitBinary(),
    dataDir: join(config.dataDir, 'livekit'),
    webhookUrl: `${config.internalUrl}${LIVEKIT_WEBHOOK_PATH}`,
    nodeIp,
    udpPorts,
    iceTcp: tcpPort || false,
  }).catch((error: Error) => {
    if (tcpPort && /address already in use/.test(error.message)) {
      throw new Error(
        `LIVEKIT_TCP_PORT ${tcpPort} (ICE over TCP) is taken, by another Likeness on this host perhaps: set another, or 0 for none`,
      );
    }
    throw error;
  });
  return {
    connection: connectLivekit({
      url: local.url,
      apiKey: local.apiKey,
      apiSecret: local.apiSecret,
      publicUrl: publicUrl ?? local.url,
    }),
    local,
  };
}

export async function openServices(config: Config, overrides: ServiceOverrides = {}): Promise<Services> {
  // First: a pipeline module that does not load stops the start before anything is opened
  // (a database handed in belongs to the service from here, so it is closed).
  const pipelines =
    overrides.pipelines ??
    (await loadPipelines(config.pipelines).catch(async (error: unknown) => {
      await overrides.database?.close();
      throw error;
    }));
  const database =
    overrides.database ??
    (await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: pgliteDirFor(config.dataDir) }));
  const store = overrides.store ?? createAssetStore(config);
  const mediaLimits = overrides.mediaLimits ?? defaultMediaLimits;
  const db = database.db;
  const { connection: livekit, local: localLivekit } = overrides.livekit
    ? { connection: overrides.livekit }
    : await openLivekit(config);
  const billing = new SessionBilling(db, config.credits.perAvatarMinute);
  const voices = new Voices(config.providers.elevenlabs, db);
  const lifecycle = new SessionLifecycle({
    db,
    billing,
    livekit,
    joinTimeoutSeconds: config.sessions.joinTimeoutSeconds,
    agentTimeoutSeconds: config.sessions.agentTimeoutSeconds,
    rejoinSeconds: config.sessions.rejoinSeconds,
    afterEnd: () => voices.releaseUnused(),
  });
  // Started now, awaited by nobody: /readyz answers 503 until it is done.
  let warm: 'warming' | 'ok' | Error = 'warming';
  void warmUp({ pipelines, db }).then(
    () => (warm = 'ok'),
    (error: unknown) => (warm = error instanceof Error ? error : new Error(String(error))),
  );
  const readiness = new Readiness({
    database: database.ping,
    // LiveKit's own health answer: cheap, unlike listing its rooms.
    livekit: async () => {
      const answer = await fetch(`${httpUrlOf(livekit.url)}/`, { signal: AbortSignal.timeout(2_000) });
      if (!answer.ok) throw new Error(`LiveKit answered ${answer.status}`);
    },
    warm: async () => {
      if (warm === 'warming') throw new Error('warming up');
      if (warm instanceof Error) throw warm;
    },
  });
  const adminToken = await adminTokenFor(config);
  const assetLinks = new AssetLinks(config.assetsUrl, adminToken, config.assetUrlTtlSeconds);
  return {
    readiness,
    billing,
    lifecycle,
    livekit,
    localLivekit,
    agentWatch: new AgentWatch({
      db,
      lifecycle,
      livekit,
      settings: config.sessions,
      agentName: config.livekit.agentName,
      assetLinks,
      internalUrl: config.internalUrl,
    }),
    config,
    database,
    store,
    ledger: new CreditLedger(db),
    pipelines,
    retraining: new Retraining({
      db,
      store,
      pipelines,
      mediaLimits,
      voices,
      workLeaseSeconds: config.workLeaseSeconds,
    }),
    trainingUpgrades: new TrainingUpgrades({
      db,
      store,
      pipelines,
      mediaLimits,
      settings: config.trainingUpgrades,
      workLeaseSeconds: config.workLeaseSeconds,
    }),
    mediaLimits,
    voices,
    operations: databaseOperations(db, config),
    adminToken,
    assetLinks,
    webhooks: new WebhookSender({ db, settings: config.webhooks, resolve: overrides.webhookResolver }),
    webhookResolver: overrides.webhookResolver,
    knowledge: new KnowledgeService({ db, settings: config.knowledge, workLeaseSeconds: config.workLeaseSeconds }),
  };
}

/** Which methods a concrete path answers, from the app's own route table (for 405). */
function methodsByPath(app: { routes: { method: string; path: string }[] }): (path: string) => string[] {
  let table: { pattern: RegExp; method: string }[] | undefined;
  return (path) => {
    table ??= app.routes.map((route) => ({
      method: route.method,
      pattern: new RegExp(
        '^' +
          route.path
            .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
            .replace(/:[^/]+/g, '[^/]+')
            .replace(/\*/g, '.*') +
          '/?$',
      ),
    }));
    return [...new Set(table.filter((r) => r.pattern.test(path)).map((r) => r.method))];
  };
}

export function buildApp(services: Services) {
  const { config, database } = services;
  const addressesFor = clientAddresses({
    links: services.assetLinks,
    rtcUrl: services.livekit.publicUrl,
    tls: config.tls,
  });
  const identityDeps = {
    db: database.db,
    ledger: services.ledger,
    store: services.store,
    pipelines: services.pipelines,
    retraining: services.retraining,
    mediaLimits: services.mediaLimits,
    addressesFor,
    onboardingCost: config.credits.onboardingCost,
    voices: services.voices,
    workLeaseSeconds: config.workLeaseSeconds,
    limits: config.limits,
    trainings: trainingAttempts(database.db),
  };
  const sessionDeps = {
    db: database.db,
    billing: services.billing,
    lifecycle: services.lifecycle,
    livekit: services.livekit,
    settings: config.sessions,
    agentName: config.livekit.agentName,
    assetLinks: services.assetLinks,
    addressesFor,
    internalUrl: config.internalUrl,
    limits: config.limits,
  };
  const toolDeps = {
    db: database.db,
    settings: config.tools,
    webhooks: config.webhooks,
    resolve: services.webhookResolver,
  };
  const knowledgeDeps = { db: database.db, settings: config.knowledge, knowledge: services.knowledge };
  // The public API's resource routes, behind both doors: API keys at /v1, the console's
  // sign-in cookie at /console/api. One handler and one schema per route either way.
  const resourceRoutes = <const Prefix extends string>(audience: Audience<Prefix>) =>
    new Elysia()
      .use(identityRoutes(identityDeps, audience))
      .use(voiceRoutes(database.db, audience))
      .use(
        pipelineRoutes(
          { db: database.db, pipelines: services.pipelines, landscapeVideo: config.sessions.landscapeVideo },
          audience,
        ),
      )
      .use(sessionRoutes(sessionDeps, audience))
      .use(sessionOrderRoutes(sessionDeps, audience))
      .use(creditRoutes({ db: database.db, ledger: services.ledger }, audience))
      .use(webhookRoutes({ db: database.db, settings: config.webhooks, resolve: services.webhookResolver }, audience))
      .use(toolRoutes(toolDeps, audience))
      .use(documentRoutes(knowledgeDeps, audience))
      .use(publishableKeyRoutes(database.db, audience));
  // Bun's own cap (an empty 413) only bounds bodies sent without Content-Length; the check
  // below answers those with a length, in the error shape (docs/api.md#errors), before reading them.
  // Elysia turns SO_REUSEPORT on by default: a second service on the same port would then
  // share its traffic silently instead of failing to start.
  // precompile: every route's handler is compiled at start, not on its first request (warm before ready).
  const app = new Elysia({
    precompile: true,
    serve: { maxRequestBodySize: config.maxRequestBytes * 2, reusePort: false },
  });
  // One chain, so that the app's type holds every route.
  return app
    .use(finishedRequests([countRequest, logRequest], accountOf))
    .use(httpErrors(methodsByPath(app)))
    .onRequest(({ request }) => {
      // Refuse oversized uploads before reading them.
      const length = Number(request.headers.get('content-length') ?? 0);
      if (length > config.maxRequestBytes) {
        throw new ApiError(413, `Request body too large: at most ${config.maxRequestBytes} bytes`);
      }
    })
    .use(
      credentialsBeforeBodies(
        database.db,
        [...CONSOLE_OPEN_PATHS, EMBED_START_PATH],
        [
          adminDoor(services.adminToken),
          jobReportDoor(database.db),
          heartbeatDoor(services.livekit),
          livekitWebhookDoor(services.livekit),
        ],
      ),
    )
    .use(bodyParsers)
    .use(refuseUnstorableText)
    .use(apiDocs(packageJson.version))
    .use(healthRoutes(services.readiness))
    .use(
      metricsRoutes({
        db: database.db,
        agentName: config.livekit.agentName,
        tokens: [config.metricsToken ?? '', services.adminToken],
      }),
    )
    .use(assetRoutes(services.store, services.assetLinks))
    .use(signalProxy(services.livekit.url))
    .use(adminRoutes(services.operations, services.adminToken))
    .use(consoleRoutes({ db: database.db, settings: config.console }))
    .use(resourceRoutes(PUBLIC_API))
    .use(resourceRoutes(CONSOLE_API))
    .use(embedRoutes({ sessionDeps, trustedProxies: config.console.trustedProxies }))
    .use(
      jobReportRoutes({
        db: database.db,
        billing: services.billing,
        lifecycle: services.lifecycle,
        agentWatch: services.agentWatch,
      }),
    )
    .use(toolCallRoutes(toolDeps))
    .use(knowledgeRoutes(knowledgeDeps))
    .use(livekitWebhookRoutes({ lifecycle: services.lifecycle, livekit: services.livekit }))
    .use(workerRoutes({ db: database.db, livekit: services.livekit }));
}

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
  const periodic = startPeriodicWork(services, config, {
    recovery: () => recover({ graceSeconds: config.recoveryGraceSeconds }),
  });
  return {
    services,
    url,
    secure,
    async stop() {
      periodic.stop();
      // Not forced: requests in flight finish (a create mid-training completes) before the database closes.
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
