// The control plane's services: the database, the asset store, LiveKit, the ledger, the
// pipelines, the voices and the sessions' machinery, opened once per process (src/server.ts
// starts them; tests open them with overrides).
import { join } from 'node:path';
import { databaseOperations, type Operations } from './admin/operations.ts';
import { adminTokenFor } from './admin/service-record.ts';
import { AssetLinks } from './assets/links.ts';
import { type AssetStore, createAssetStore } from './assets/store.ts';
import type { Config } from './config.ts';
import { CreditLedger } from './credits/ledger.ts';
import { type DatabaseHandle, openDatabase, pgliteDirFor } from './db/index.ts';
import { EventLoopWatch } from './health/event-loop.ts';
import { Readiness } from './health/index.ts';
import { Retraining } from './identities/retraining.ts';
import { TrainingUpgrades } from './identities/training-upgrades.ts';
import { KnowledgeService } from './knowledge/index.ts';
import { connectLivekit, httpUrlOf, type LivekitConnection } from './livekit/connection.ts';
import { LocalLivekitServer, livekitBinary } from './livekit/index.ts';
import { SignalTunnels } from './livekit/signal-proxy.ts';
import { defaultUploadBounds, type UploadBounds } from './media/index.ts';
import { loadPipelines, type PipelineRegistry } from './pipelines/registry.ts';
import { RecordingFinisher } from './recordings/index.ts';
import { AgentWatch } from './sessions/agent-watch.ts';
import { SessionBilling } from './sessions/billing.ts';
import { SessionLifecycle } from './sessions/lifecycle.ts';
import { LIVEKIT_WEBHOOK_PATH } from './sessions/livekit-webhooks.ts';
import { VisitorTokens } from './visitors/index.ts';
import { Voices } from './voices/index.ts';
import { warmUp } from './warm-up.ts';
import { type Resolver, systemResolver } from './webhooks/destinations.ts';
import { WebhookSender } from './webhooks/index.ts';

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
  uploadBounds: UploadBounds;
  /** Preset voices and cloning (ElevenLabs when configured). */
  voices: Voices;
  operations: Operations;
  adminToken: string;
  /** Signs and checks the tokens a backend gives its page to name a visitor (src/visitors/tokens.ts). */
  visitorTokens: VisitorTokens;
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
  /** Joins sessions' recordings once they end, and removes them after their retention (src/recordings). */
  recordings: RecordingFinisher;
  /** The LiveKit server this process started (embedded mode), stopped with the service. */
  localLivekit?: LocalLivekitServer;
  /** The visitors' signalling connections through this process (/rtc), closed when it stops. */
  signalling: SignalTunnels;
  /** Stalls of this process's event loop, logged with the requests they held (started by startService). */
  eventLoop: EventLoopWatch;
}

export interface ServiceOverrides {
  database?: DatabaseHandle;
  store?: AssetStore;
  pipelines?: PipelineRegistry;
  uploadBounds?: UploadBounds;
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

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the service's wiring: each part built from those before it, then handed out as one object
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
  const uploadBounds = overrides.uploadBounds ?? defaultUploadBounds;
  const db = database.db;
  const { connection: livekit, local: localLivekit } = overrides.livekit
    ? { connection: overrides.livekit }
    : await openLivekit(config);
  const billing = new SessionBilling(db, config.credits.perAvatarMinute, config.recordings.creditsPerMinute);
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
  const readiness = readinessOf({ pipelines, database, livekit });
  const adminToken = await adminTokenFor(config);
  const assetLinks = new AssetLinks(config.assetsUrl, adminToken, config.assetUrlTtlSeconds);
  return {
    readiness,
    eventLoop: new EventLoopWatch(config.eventLoopStallMs),
    billing,
    lifecycle,
    livekit,
    localLivekit,
    signalling: new SignalTunnels(),
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
      uploadBounds,
      voices,
      workLeaseSeconds: config.workLeaseSeconds,
    }),
    trainingUpgrades: new TrainingUpgrades({
      db,
      store,
      pipelines,
      uploadBounds,
      settings: config.trainingUpgrades,
      workLeaseSeconds: config.workLeaseSeconds,
    }),
    uploadBounds,
    voices,
    operations: databaseOperations(db, config),
    adminToken,
    assetLinks,
    visitorTokens: new VisitorTokens(adminToken),
    webhooks: new WebhookSender({ db, settings: config.webhooks, resolve: overrides.webhookResolver }),
    webhookResolver: overrides.webhookResolver,
    knowledge: new KnowledgeService({ db, settings: config.knowledge, workLeaseSeconds: config.workLeaseSeconds }),
    recordings: new RecordingFinisher({
      db,
      store,
      settings: config.recordings,
      workLeaseSeconds: config.workLeaseSeconds,
      ffmpegPath: uploadBounds.ffmpegPath,
      bucketRules: {
        allowPrivate: config.webhooks.allowPrivate,
        resolve: overrides.webhookResolver ?? systemResolver,
      },
    }),
  };
}

/** What /readyz checks: the database, LiveKit, and the warm-up, started now and awaited by nobody. */
function readinessOf({
  pipelines,
  database,
  livekit,
}: {
  pipelines: PipelineRegistry;
  database: DatabaseHandle;
  livekit: LivekitConnection;
}): Readiness {
  let warm: 'warming' | 'ok' | Error = 'warming';
  void warmUp({ pipelines, db: database.db }).then(
    () => (warm = 'ok'),
    (error: unknown) => (warm = error instanceof Error ? error : new Error(String(error))),
  );
  return new Readiness({
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
}
