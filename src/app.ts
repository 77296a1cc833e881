// Builds one running service: storage, services, the HTTP pipeline and every API
// family. main.ts listens; tests call createApp with their own configuration.
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { AccountsService } from './accounts/accounts-service.ts';
import { ActivityLog } from './activity/activity-log.ts';
import { adminRoutes } from './api/admin/routes.ts';
import { healthRoutes } from './api/health/routes.ts';
import { metaRoutes } from './api/meta/routes.ts';
import { metricsRoutes } from './api/metrics/routes.ts';
import { chatRoutes } from './api/chat/routes.ts';
import { responseBatchEndpoint, responsesRoutes } from './api/responses/routes.ts';
import { StoredResponses } from './api/responses/stored-responses.ts';
import { backgroundResponseJob, backgroundResponses } from './api/responses/background.ts';
import { Compaction, sealingKey } from './api/responses/compaction.ts';
import { responsesWebSocket, websocketPluginOptions } from './api/responses/websocket.ts';
import fastifyWebsocket from '@fastify/websocket';
import { Conversations } from './api/conversations/conversations-store.ts';
import { conversationsRoutes } from './api/conversations/routes.ts';
import type { ResponsesDeps } from './api/responses/response-call.ts';
import { StoredCompletions } from './api/chat/stored-completions.ts';
import { storedChatRoutes } from './api/chat/stored-routes.ts';
import { registerHousekeeping } from './jobs/housekeeping.ts';
import { openSignals } from './cluster/signals.ts';
import { JobQueue } from './jobs/job-queue.ts';
import { JobRunner } from './jobs/job-runner.ts';
import { filesRoutes } from './api/files/routes.ts';
import { Containers } from './api/containers/containers-store.ts';
import { containersRoutes } from './api/containers/routes.ts';
import type { Sandbox } from './sandbox/types.ts';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { BwrapSandbox } from './sandbox/bwrap-sandbox.ts';
import { chooseSandboxRoot } from './sandbox/sandbox-root.ts';
import { skillsRoutes } from './api/skills/routes.ts';
import { SkillMounts } from './api/skills/skill-mounts.ts';
import { ContainerRuntime } from './api/containers/container-runtime.ts';
import { SKILLS_SUBDIR } from './sandbox/types.ts';
import { Skills } from './api/skills/skills-store.ts';
import { ingestHandler, ingestJob } from './api/vector-stores/ingest.ts';
import { detachDeletedFile, vectorStoresRoutes } from './api/vector-stores/routes.ts';
import { VectorStores } from './api/vector-stores/vector-stores-store.ts';
import { HybridSearch } from './retrieval/hybrid-search.ts';
import { loadEmbedder } from './retrieval/load-embedder.ts';
import { closeDocumentSandbox } from './documents/extract-text.ts';
import { passageIndex } from './retrieval/passage-index.ts';
import { BatchEndpoints } from './api/batches/batch-endpoints.ts';
import { batchJobHandler } from './api/batches/batch-job.ts';
import { Batches, batchJob } from './api/batches/batches-service.ts';
import { batchesRoutes } from './api/batches/routes.ts';
import { ToolRegistry } from './tools/registry.ts';
import type { AgentTool } from './tools/types.ts';
import type { KeyRecord } from './keys/keys-service.ts';
import { chatBatchEndpoint } from './api/chat/chat-call.ts';
import { completionBatchEndpoint } from './api/completions/completion-call.ts';
import { embeddingsBatchEndpoint } from './api/embeddings/embeddings-call.ts';
import { moderationsRoutes } from './api/moderations/routes.ts';
import { decisionsRoutes } from './api/decisions/routes.ts';
import { speechRoutes } from './api/audio/speech-routes.ts';
import { transcriptionRoutes } from './api/audio/transcription-routes.ts';
import { imagesRoutes } from './api/images/routes.ts';
import { IMAGE_ENGINE } from './providers/engines.ts';
import { moderationsBatchEndpoint } from './api/moderations/moderations-call.ts';
import { embeddingsRoutes } from './api/embeddings/routes.ts';
import { StoredFiles } from './api/files/stored-files.ts';
import { DiskBlobStore } from './blobs/disk-blob-store.ts';
import { completionsRoutes } from './api/completions/routes.ts';
import { modelsRoutes } from './api/models/routes.ts';
import { unsupportedRoutes } from './api/unsupported/routes.ts';
import type { Config } from './config.ts';
import { Router } from './http/router.ts';
import { ADMIN, GATEWAY, MESSAGES } from './contract/roots.ts';
import { gatewayRoutes } from './api/gateway/routes.ts';
import { LateCosts } from './api/gateway/late-cost.ts';
import { Aggregator } from './providers/aggregator/aggregator.ts';
import { messagesRoutes } from './api/messages/routes.ts';
import { ThinkingSignatures } from './api/messages/thinking-signature.ts';
import { PrefixCache } from './api/messages/prefix-cache.ts';
import { isAllowEmpty, OutboundGuard, parseOutboundAllow } from './outbound/guard.ts';
import { loadSearchBackend } from './tools/web-search/backends.ts';
import { createHttpServer, installPipeline } from './http/server.ts';
import { Ledger } from './credits/ledger.ts';
import { KeysService } from './keys/keys-service.ts';
import { AdminTokens } from './keys/admin-tokens.ts';
import { ensureBootstrapKey } from './bootstrap/bootstrap-key.ts';
import { createChatBackend, enginesFor, type ChatBackend } from './providers/index.ts';
import { KeyCaps } from './limits/key-caps.ts';
import { MemoryLimits } from './limits/memory-limits.ts';
import { RedisLimits } from './limits/redis-limits.ts';
import { Metrics } from './observability/metrics.ts';
import { upstreamCallRecorder } from './observability/upstream-calls.ts';
import type { VectorSearch } from './retrieval/search-types.ts';
import type { Services } from './services.ts';
import { openStore } from './store/db.ts';

export interface App {
  readonly http: FastifyInstance;
  readonly services: Services;
  /** Containers on this host (its copies are swept every minute: `sweepLocal`). */
  readonly containers: ContainerRuntime;
  /** Stops accepting, lets in-flight requests finish, flushes the activity log, closes storage. */
  close(): Promise<void>;
}

export interface AppOptions {
  /** Extra endpoints registered with the shared pipeline (tests use it to drive real contracts). */
  routes?: (router: Router) => void;
  /** A chat backend other than the configured one (tests). */
  chat?: ChatBackend;
  /** The environment the upstream provider is configured from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Where log lines go instead of stdout (tests read them). */
  logStream?: DestinationStream;
  /** The search behind the Responses file_search tool instead of the vector stores' own (tests). */
  vectorSearch?: VectorSearch;
  /** The sandbox containers and code runs use instead of the host's bubblewrap one (tests). */
  sandbox?: Sandbox;
  /** The assistant's own tools instead of the registry's web tools (tests). */
  assistantTools?: (key: KeyRecord) => AgentTool[];
}

export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const http = createHttpServer(config, options.logStream);
  // Before the database, so a blob directory that cannot be made leaves nothing open.
  const blobs = await DiskBlobStore.open(config.blobDir, { instanceId: config.instanceId });
  const embedder = await loadEmbedder(config.embedderModule);
  const store = await openStore(config.database, {
    onBackgroundError: (err) => http.log.warn({ err }, 'background database work failed'),
    walCheckpointMs: config.sqliteCheckpointMs,
  });
  const ledger = new Ledger(store, http.log, config.instanceId, config.holdLeaseMs);
  const accounts = new AccountsService(store.db, () => ledger.settling());
  const metrics = new Metrics(config.instanceId);
  // Cancels, key changes and background-response progress reach every instance at once (Redis when REDIS_URL is set).
  const signals = openSignals(config.redisUrl, http.log);
  await signals.ready();
  const jobs = new JobQueue(store, signals);
  // A backend configured wrong (brave without its key, a module without the export) stops start-up.
  const webSearch = await loadSearchBackend(config.webSearch);
  const outboundAllow = parseOutboundAllow(config.outboundAllow);
  if (!isAllowEmpty(outboundAllow)) {
    http.log.warn({ allow: config.outboundAllow }, 'AGENT_API_OUTBOUND_ALLOW is set: these addresses are exempt from the outbound guard (plain http and private addresses allowed); for tests only');
  }
  const chat = options.chat ?? createChatBackend(config, options.env, upstreamCallRecorder(metrics, http.log));
  const services: Services = {
    config,
    log: http.log,
    store,
    accounts,
    keys: new KeysService(store.db, config.keyCacheMs, signals),
    adminTokens: new AdminTokens(store.db, config.adminToken, config.keyCacheMs),
    // Several instances share their limits through Redis; one counts them in-process.
    limits: config.redisUrl
      ? await RedisLimits.open({ url: config.redisUrl, ...config.redisLimits, instanceId: config.instanceId, log: http.log })
      : new MemoryLimits(),
    caps: new KeyCaps(store.db),
    // A row is written once the settlements answered before it are committed: the ledger entry comes first (recover.ts).
    activity: new ActivityLog(store, http.log, config.activityFlushMs, config.instanceId, () => ledger.settling()),
    ledger,
    chat,
    engines: enginesFor(config, chat),
    outbound: new OutboundGuard({ allow: outboundAllow }),
    webSearch,
    metrics,
    signals,
    jobs,
    jobRunner: new JobRunner(jobs, {
      instanceId: config.instanceId,
      log: http.log,
      pollMs: config.jobsPollMs,
      leaseMs: config.jobLeaseMs,
      // Half the shutdown grace: the rest is for in-flight requests and closing storage.
      stopGraceMs: Math.min(5_000, config.shutdownGraceMs / 2),
    }),
    blobs,
    files: new StoredFiles(store.db, blobs, http.log),
  };
  metrics.watchActivityQueue(() => services.activity.pending);

  if (config.bootstrapKey) await ensureBootstrapKey(store.db, config.bootstrapKey, config.bootstrapCredits);

  // Holds of this instance's previous process (a crash, kill -9) will never settle.
  const released = await services.ledger.releasePreviousHolds(Date.now());
  if (released.length > 0) http.log.warn({ holds: released.length, instance: config.instanceId }, 'released the credit holds of calls cut off by the previous process');
  // Then the activity rows its previous process had not written yet (those calls, and the
  // ones it ran to the end), rebuilt from the ledger, so the log again equals the ledger.
  const recovered = await services.activity.recover(released);
  if (recovered > 0) http.log.warn({ rows: recovered, instance: config.instanceId }, 'rebuilt from the ledger the activity rows the previous process had not written');

  installPipeline(http, services);
  await http.register(fastifyWebsocket, websocketPluginOptions(config.bodyLimitBytes));
  const router = new Router(http, services);
  metricsRoutes(http, services);
  unsupportedRoutes(http);
  modelsRoutes(router);
  const stored = new StoredCompletions(store.db, Date.now, store.relaxed);
  // The one tool registry (tools/registry.ts); file_search and containers join it once made below.
  const tools = new ToolRegistry({
    outbound: services.outbound,
    webSearch,
    prices: config.toolPrices,
    sandboxTimeoutMs: config.sandboxTimeoutMs,
    webMaxUses: config.webMaxUses,
    ...(options.assistantTools ? { assistant: options.assistantTools } : {}),
  });
  chatRoutes(router, stored, tools);
  storedChatRoutes(router, stored);
  completionsRoutes(router);
  // Vector stores: rows, the hybrid search over the database's indexes, ingestion jobs.
  const vectorStores = new VectorStores(store.db);
  filesRoutes(router, services.files, { detach: detachDeletedFile(vectorStores, jobs) });
  const index = passageIndex(store, config.database.kind === 'sqlite' ? config.database.file : undefined);
  const vectorSearch = new HybridSearch(store.db, index, embedder);
  const indexBytes = config.indexBytesPerAccount;
  services.jobRunner.handle(ingestJob, ingestHandler({ store, files: services.files, vectorStores, embedder, accountIndexBytes: indexBytes }), { concurrency: config.ingestJobs });
  vectorStoresRoutes(router, { vectorStores, search: vectorSearch, files: services.files, jobs, accountIndexBytes: indexBytes });
  // Containers: rows here, files and runs in the sandbox (503 from every route when it cannot run here).
  // As root, the configured root may be one the sandbox's uids cannot reach (a checkout under
  // /root): then containers live under one the service makes (sandbox/sandbox-root.ts).
  const sandboxRoot = options.sandbox
    ? { root: config.sandboxDir }
    : await chooseSandboxRoot({ configured: config.sandboxDir, explicit: config.sandboxDir !== path.join(config.dataDir, 'containers') });
  const sandbox: Sandbox =
    options.sandbox ?? new BwrapSandbox({ root: sandboxRoot.root, rootNote: sandboxRoot.note, rootProblem: sandboxRoot.problem, timeoutMs: config.sandboxTimeoutMs });
  const containers = new Containers(store.db);
  // Skills: versions of files kept as blobs, written out under the sandbox root to be mounted read-only.
  const skills = new Skills(store.db, blobs);
  const containerRuntime = new ContainerRuntime({
    containers,
    sandbox,
    files: services.files,
    blobs,
    skillMounts: new SkillMounts(skills),
    skillsDir: path.join(sandboxRoot.root, SKILLS_SUBDIR),
    perAccount: config.containersPerAccount,
  });
  containersRoutes(router, { runtime: containerRuntime, blobs });
  healthRoutes(http, services, () => containerRuntime.status());
  skillsRoutes(router, skills);
  const conversations = new Conversations(store.db);
  const sealKey = await sealingKey(store.db, config.secret);
  const compaction = new Compaction(sealKey);
  tools.provide({ vectorSearch: options.vectorSearch ?? vectorSearch, containers: containerRuntime });
  // The image_generation tool: the image engine, priced per image as the endpoints.
  tools.provide({ images: { engine: services.engines.for('images', IMAGE_ENGINE), priceUsd: (q, w, h) => (config.imagePrices[q] * w * h) / (1024 * 1024) } });
  const responses = {
    stored: new StoredResponses(store.db, Date.now, store.relaxed),
    tools,
    conversations,
    compaction,
    vectorSearch: options.vectorSearch ?? vectorSearch,
    containers: containerRuntime,
  } satisfies ResponsesDeps;
  const background = backgroundResponses(services, responses);
  services.jobRunner.handle(backgroundResponseJob, background.handler, { concurrency: config.backgroundResponses });
  responsesRoutes(router, responses, background);
  responsesWebSocket(http, services, responses);
  conversationsRoutes(router, conversations);
  embeddingsRoutes(router);
  moderationsRoutes(router);
  decisionsRoutes(router);
  speechRoutes(router);
  transcriptionRoutes(router);
  // Images (Image generation switch): offline renderer or the upstream's /images/*.
  imagesRoutes(router);
  // Batches: the endpoints a line may name, and the job that runs a batch.
  const batchEndpoints = new BatchEndpoints();
  batchEndpoints.register(chatBatchEndpoint(services, stored, tools));
  batchEndpoints.register(completionBatchEndpoint(services));
  batchEndpoints.register(responseBatchEndpoint(services, responses));
  batchEndpoints.register(embeddingsBatchEndpoint(services));
  batchEndpoints.register(moderationsBatchEndpoint(services));
  batchesRoutes(router, new Batches(store.db, jobs, services.files), batchEndpoints.urls);
  services.jobRunner.handle(batchJob, batchJobHandler(services, batchEndpoints, { concurrency: config.batchConcurrency }), { concurrency: config.batchJobs });
  const admin = new Router(http, services, ADMIN);
  adminRoutes(admin);
  // The messages-style surface: its own root (error shape, documents), the same pipeline and providers.
  const messages = new Router(http, services, MESSAGES);
  messagesRoutes(messages, { signatures: new ThinkingSignatures(sealKey), prefixCache: new PrefixCache(), tools, containers: containerRuntime });
  // The gateway: forwards to the configured upstream aggregator (none: its forwarding routes answer 502).
  const gw = config.gateway;
  const aggregator = gw.url ? new Aggregator({ url: gw.url, key: gw.key, referer: gw.referer, title: gw.title, timeoutMs: gw.timeoutMs, modelsRefreshMs: gw.modelsRefreshMs }) : null;
  const lateCosts = new LateCosts(services, aggregator, gw.lateCostWindowMs, gw.lateCostRetryMs);
  const gateway = new Router(http, services, GATEWAY);
  gatewayRoutes(gateway, { aggregator, lateCosts });
  options.routes?.(router);
  // Last: each root's published contract lists what the routes above registered.
  metaRoutes(router);
  metaRoutes(admin);
  metaRoutes(messages);
  metaRoutes(gateway);
  await http.ready();

  // Each running call's credit hold keeps its lease while this instance lives.
  services.ledger.startLeaseRenewal();
  // Housekeeping as recurring jobs (one instance at a time): expired stored completions,
  // holds a crashed instance left, finished jobs.
  registerHousekeeping(services.jobRunner, jobs, {
    expireStoredCompletions: () => stored.sweepExpired(),
    expireStoredResponses: () => responses.stored.expire(),
    expireVectorStores: () => vectorStores.expire(),
    expireContainers: () => containerRuntime.expire(http.log),
    releaseStaleHolds: (olderThanMs) => services.ledger.releaseStale(olderThanMs),
    staleHoldsEveryMs: config.holdLeaseMs,
  });
  await services.jobRunner.start();
  // Every instance removes its own copies of containers another instance deleted or expired.
  const stopLocalSweep = containerRuntime.startLocalSweep(60_000, http.log);

  let closing: Promise<void> | undefined;
  return {
    http,
    services,
    containers: containerRuntime,
    close: () =>
      (closing ??= (async () => {
        // Connections that go idle after their last in-flight response would otherwise keep
        // close() waiting for the keep-alive timeout.
        const closeIdle = setInterval(() => http.server.closeIdleConnections(), 50);
        try {
          // Running jobs are interrupted and handed back while requests finish.
          await Promise.all([http.close(), services.jobRunner.stop()]);
        } finally {
          clearInterval(closeIdle);
        }
        services.ledger.stopLeaseRenewal();
        stopLocalSweep();
        lateCosts.close();
        await aggregator?.close();
        // The settlements answered and not committed yet, then the activity rows after them.
        await services.ledger.close();
        await services.activity.close();
        await services.outbound.dispatcher.close();
        for (const engine of services.engines.all()) await (engine as { close?: () => Promise<void> }).close?.();
        await services.limits.close();
        await signals.close();
        await index.close();
        await closeDocumentSandbox();
        // A root the service made elsewhere goes when it holds nothing (made again at the next start).
        if (sandboxRoot.note) await fsp.rmdir(sandboxRoot.root).catch(() => undefined);
        await store.close();
        (http.log as { flush?: () => void }).flush?.();
      })()),
  };
}
