// The control plane's HTTP app: every route of both doors (/v1 and /console/api), the
// internal routes, the pages, and the checks that run before any of them (sizes,
// credentials before bodies, unstorable text). One chain, so the app's type names every route.
import { Elysia } from 'elysia';
import packageJson from '../package.json' with { type: 'json' };
import { adminDoor, adminRoutes } from './admin/index.ts';
import { assetRoutes } from './assets/index.ts';
import {
  type Audience,
  accountOf,
  CONSOLE_API,
  credentialsBeforeBodies,
  jobReportDoor,
  PUBLIC_API,
} from './auth/index.ts';
import { CONSOLE_OPEN_PATHS, consoleRoutes } from './console/index.ts';
import { creditRoutes } from './credits/index.ts';
import { EMBED_START_PATH, embedRoutes } from './embed/index.ts';
import { healthRoutes } from './health/index.ts';
import { bodyParsers } from './http/body.ts';
import { clientUrls } from './http/client-urls.ts';
import { ApiError, httpErrors } from './http/errors.ts';
import { finishedRequests } from './http/finished-requests.ts';
import { refuseUnstorableText } from './http/unstorable-text.ts';
import { identityRoutes } from './identities/index.ts';
import { trainingAttempts } from './identities/training-limits.ts';
import { documentRoutes, knowledgeRoutes } from './knowledge/index.ts';
import { signalProxy } from './livekit/signal-proxy.ts';
import { logRequest } from './logging/index.ts';
import { countRequest, metricsRoutes } from './metrics/index.ts';
import { apiDocs } from './openapi/index.ts';
import { pipelineRoutes } from './pipelines/index.ts';
import { publishableKeyRoutes } from './publishable-keys/index.ts';
import { recordingIntakeRoutes, recordingRoutes, recordingStorageRoutes } from './recordings/index.ts';
import type { Services } from './services.ts';
import { sessionRoutes } from './sessions/index.ts';
import { jobReportRoutes } from './sessions/job-reports.ts';
import { livekitWebhookDoor, livekitWebhookRoutes } from './sessions/livekit-webhooks.ts';
import { sessionOrderRoutes } from './sessions/orders.ts';
import { toolCallRoutes, toolRoutes } from './tools/index.ts';
import { visitorRoutes } from './visitors/index.ts';
import { voiceRoutes } from './voices/index.ts';
import { systemResolver } from './webhooks/destinations.ts';
import { webhookRoutes } from './webhooks/index.ts';
import { heartbeatDoor, workerRoutes } from './workers/index.ts';

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

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the app's route table: hooks, then every feature's routes, in the order Elysia must see them
export function buildApp(services: Services) {
  const { config, database } = services;
  const urlsFor = clientUrls({
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
    uploadBounds: services.uploadBounds,
    urlsFor,
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
    urlsFor,
    internalUrl: config.internalUrl,
    limits: config.limits,
  };
  const toolDeps = {
    db: database.db,
    settings: config.tools,
    webhooks: config.webhooks,
    resolve: services.webhookResolver,
  };
  // Accounts' own buckets follow the webhooks' address rules (src/recordings/customer-bucket.ts).
  const recordingDeps = {
    db: database.db,
    settings: config.recordings,
    bucketRules: { allowPrivate: config.webhooks.allowPrivate, resolve: services.webhookResolver ?? systemResolver },
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
      .use(publishableKeyRoutes(database.db, audience))
      .use(visitorRoutes({ db: database.db, tokens: services.visitorTokens }, audience))
      .use(recordingRoutes({ ...recordingDeps, store: services.store, urlsFor }, audience))
      .use(recordingStorageRoutes({ ...recordingDeps, rules: recordingDeps.bucketRules }, audience));
  // Bun's own cap (an empty 413) only bounds bodies sent without Content-Length; the check
  // below answers those with a length, in the error shape (docs/api.md#errors), before reading them.
  // Elysia turns SO_REUSEPORT on by default: a second service on the same port would then
  // share its traffic silently instead of failing to start.
  // precompile: every route's handler is compiled at start, not on its first request (warm before ready).
  const app = new Elysia({
    precompile: config.precompileRoutes,
    serve: { maxRequestBodySize: config.maxRequestBytes * 2, reusePort: false },
  });
  // One chain, so that the app's type holds every route.
  return app
    .use(finishedRequests([countRequest, logRequest], accountOf))
    .use(httpErrors(methodsByPath(app)))
    .use(services.eventLoop.plugin())
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
    .use(signalProxy(services.livekit.url, services.signalling))
    .use(adminRoutes(services.operations, services.adminToken))
    .use(consoleRoutes({ db: database.db, settings: config.console }))
    .use(resourceRoutes(PUBLIC_API))
    .use(resourceRoutes(CONSOLE_API))
    .use(
      embedRoutes({
        sessionDeps,
        visitorTokens: services.visitorTokens,
        trustedProxies: config.console.trustedProxies,
        limitIpv6Prefix: config.console.limitIpv6Prefix,
      }),
    )
    .use(
      jobReportRoutes({
        db: database.db,
        billing: services.billing,
        lifecycle: services.lifecycle,
        agentWatch: services.agentWatch,
      }),
    )
    .use(recordingIntakeRoutes({ db: database.db, store: services.store }))
    .use(toolCallRoutes(toolDeps))
    .use(knowledgeRoutes(knowledgeDeps))
    .use(livekitWebhookRoutes({ lifecycle: services.lifecycle, livekit: services.livekit }))
    .use(workerRoutes({ db: database.db, livekit: services.livekit }));
}
