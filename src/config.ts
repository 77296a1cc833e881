// Service configuration from the environment. Every variable is documented in
// docs/configuration.md; an invalid value stops start-up with a message naming it.
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { MAX_CREDITS } from './accounts/money.ts';
import { isValidOutboundAllow } from './outbound/guard.ts';
import { MODERATION_CATEGORIES } from './contract/endpoints/moderations.ts';
import type { SearchConfig } from './tools/web-search/backends.ts';

const number = () => z.coerce.number({ error: 'must be a number' }).finite('must be a number');
const intFrom = (def: number, min = 0) => number().int('must be a whole number').min(min, `must be at least ${min}`).default(def);
/** MODERATION_THRESHOLDS: `violence=0.6,sexual=0.4`; undefined when it does not parse. */
function parseThresholds(value: string): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  for (const raw of value.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const [name, score] = entry.split('=').map((x) => x.trim());
    const n = Number(score);
    if (!name || !(MODERATION_CATEGORIES as readonly string[]).includes(name) || score === undefined || score === '' || !Number.isFinite(n) || n < 0 || n > 1) return undefined;
    out[name] = n;
  }
  return out;
}

const priceFrom = (def: number) => number().min(0, 'must not be negative').default(def);
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const envSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: intFrom(8080, 0).refine((p) => p <= 65535, 'must be a port number (0 to 65535)'),
  DATA_DIR: z.string().default('./data'),
  AGENT_API_BLOB_DIR: optionalString,
  AGENT_API_SANDBOX_DIR: optionalString,
  AGENT_API_SANDBOX_TIMEOUT_MS: intFrom(30_000, 100),
  AGENT_API_CONTAINERS_PER_ACCOUNT: intFrom(50, 1),
  AGENT_API_AGENT_MAX_STEPS: intFrom(8, 1),
  AGENT_API_AGENT_DEADLINE_MS: intFrom(120_000, 1_000),
  AGENT_API_WEB_MAX_USES: intFrom(10, 1),
  WEB_SEARCH_PRICE_PER_CALL: priceFrom(0.01),
  WEB_PAGE_PRICE_PER_CALL: priceFrom(0),
  MODERATION_THRESHOLD: number().min(0).max(1).default(0.5),
  // A worker per spare core, at most 2 (one core is the event loop's), as the JSON parse pool.
  AGENT_API_IMAGE_MODERATION_WORKERS: intFrom(Math.max(1, Math.min(2, os.availableParallelism() - 1)), 1),
  // Images: USD per image of 1024 x 1024 by quality (in proportion to the pixels), wherever it is made.
  IMAGE_PRICE_STANDARD: priceFrom(0.04),
  IMAGE_PRICE_HD: priceFrom(0.08),
  IMAGE_PRICE_HIGH: priceFrom(0.17),
  IMAGE_PRICE_MAX: priceFrom(0.25),
  MODERATION_THRESHOLDS: optionalString.refine((v) => v === undefined || parseThresholds(v) !== undefined, {
    message: `must be category=score pairs, comma-separated, each score 0 to 1, categories among ${MODERATION_CATEGORIES.join(', ')}`,
  }),
  DATABASE_URL: optionalString.refine((v) => v === undefined || /^postgres(ql)?:\/\//.test(v) || v.startsWith('sqlite:'), {
    message: 'must be postgres://... (or sqlite:<path>)',
  }),
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  AGENT_API_ADMIN_TOKEN: optionalString,
  AGENT_API_SECRET: optionalString,
  AGENT_API_METRICS_TOKEN: optionalString,
  AGENT_API_BOOTSTRAP_KEY: optionalString.refine((v) => v === undefined || v.length >= 16, {
    message: 'must be at least 16 characters',
  }),
  AGENT_API_BOOTSTRAP_CREDITS: priceFrom(100)
    .refine((n) => n <= MAX_CREDITS, `must be at most ${MAX_CREDITS}`)
    .refine((n) => Number(n.toFixed(6)) === n, 'must have at most 6 decimal places'),
  AGENT_API_TRUSTED_PROXIES: optionalString,
  AGENT_API_OUTBOUND_ALLOW: optionalString.refine((v) => v === undefined || isValidOutboundAllow(v), 'each entry must be a host, host:port or an IP address or CIDR range'),
  AGENT_API_HOLD_LEASE_MS: intFrom(60_000, 1_000),
  AGENT_API_BATCH_CONCURRENCY: intFrom(4, 1),
  AGENT_API_BATCH_JOBS: intFrom(2, 1),
  AGENT_API_BACKGROUND_RESPONSES: intFrom(8, 1),
  AGENT_API_WS_SESSION_MS: intFrom(60 * 60_000, 1_000),
  AGENT_API_INGEST_JOBS: intFrom(2, 1),
  AGENT_API_INDEX_MB_PER_ACCOUNT: intFrom(500, 1),
  AGENT_API_EMBEDDER_MODULE: optionalString,
  WEB_SEARCH_BACKEND: z.enum(['searxng', 'brave']).optional(),
  WEB_SEARCH_URL: optionalString,
  WEB_SEARCH_API_KEY: optionalString,
  WEB_SEARCH_MODULE: optionalString,
  AGENT_API_INSTANCE_ID: optionalString.refine((v) => v === undefined || v.length <= 200, { message: 'must be at most 200 characters' }),
  AGENT_API_ACCOUNT_CONCURRENCY: intFrom(6, 1),
  AGENT_API_MAX_RPM: intFrom(10_000, 1),
  AGENT_API_BODY_LIMIT_BYTES: intFrom(10 * 1024 * 1024, 1024),
  AGENT_API_KEY_CACHE_MS: intFrom(5_000, 0),
  AGENT_API_ACTIVITY_FLUSH_MS: intFrom(50, 1),
  AGENT_API_SQLITE_CHECKPOINT_MS: intFrom(250, 0),
  AGENT_API_SHUTDOWN_GRACE_MS: intFrom(10_000, 0),
  AGENT_API_JOBS_POLL_MS: intFrom(1_000, 10),
  AGENT_API_JOB_LEASE_MS: intFrom(30_000, 1_000),
  AGENT_API_CREDITS_PER_USD: number().positive('must be greater than 0').default(100),
  AGENT_API_DEFAULT_MAX_OUTPUT_TOKENS: intFrom(4096, 1),
  MESSAGES_MODEL: z.enum(['agent', 'agent-think']).default('agent'),
  MESSAGES_THINKING_MODEL: z.enum(['agent', 'agent-think']).default('agent-think'),
  OFFLINE_PRICE_INPUT_PER_MTOK: priceFrom(0.5),
  OFFLINE_PRICE_OUTPUT_PER_MTOK: priceFrom(1.5),
  OFFLINE_PRICE_INPUT_PER_MTOK_THINK: priceFrom(1),
  OFFLINE_PRICE_OUTPUT_PER_MTOK_THINK: priceFrom(4),
  EMBEDDING_PRICE_PER_MTOK_3_SMALL: priceFrom(0.02),
  EMBEDDING_PRICE_PER_MTOK_3_LARGE: priceFrom(0.13),
  EMBEDDING_PRICE_PER_MTOK_ADA_002: priceFrom(0.1),
  DECISION_PRICE_INPUT_PER_MTOK: priceFrom(0.5),
  SPEECH_PRICE_PER_MCHAR: priceFrom(15),
  SPEECH_PRICE_PER_MCHAR_HD: priceFrom(30),
  AGENT_API_SPEECH_WORKERS: intFrom(0, 0),
  // Transcriptions and translations (src/api/audio/transcription-*.ts).
  TRANSCRIPTION_PRICE_PER_MINUTE: priceFrom(0.006),
  AGENT_API_TRANSCRIPTION_CONCURRENCY: intFrom(2, 1),
  AGENT_API_TRANSCRIPTION_QUEUE: intFrom(16, 0),
  AGENT_API_TRANSCRIPTION_TIMEOUT_MS: intFrom(600_000, 1000),
  AGENT_API_POCKETSPHINX: z.string().trim().min(1).default('pocketsphinx_continuous'),
  AGENT_API_PUBLIC_BASE_URL: optionalString.refine((v) => v === undefined || /^https?:\/\/[^\s]+$/.test(v), {
    message: 'must be an http(s) URL such as https://api.example.com/v1',
  }),
  // Shared state of several instances (src/limits/, docs/deploy.md): unset, limits are counted in-process.
  REDIS_URL: optionalString.refine((v) => v === undefined || /^rediss?:\/\/[^\s]+$/.test(v), { message: 'must be redis://... or rediss://...' }),
  AGENT_API_LIMITS_ON_REDIS_FAILURE: z.enum(['closed', 'open'], { error: 'must be closed or open' }).default('closed'),
  AGENT_API_LIMITS_LEASE_MS: intFrom(30_000, 300),
  // The gateway's upstream aggregator (src/api/gateway/, docs/gateway.md).
  GATEWAY_UPSTREAM_URL: optionalString.refine((v) => v === undefined || isHttpUrl(v), {
    message: 'must be an http(s) URL such as https://openrouter.ai/api/v1',
  }),
  GATEWAY_UPSTREAM_KEY: optionalString,
  GATEWAY_HTTP_REFERER: optionalString.refine((v) => v === undefined || !/[\r\n]/.test(v), 'must be one line'),
  GATEWAY_X_TITLE: optionalString.refine((v) => v === undefined || !/[\r\n]/.test(v), 'must be one line'),
  GATEWAY_TIMEOUT_MS: intFrom(300_000, 1_000),
  GATEWAY_DEFAULT_RESERVATION_USD: priceFrom(1),
  GATEWAY_MODELS_REFRESH_MS: intFrom(600_000, 1_000),
  GATEWAY_LATE_COST_WINDOW_MS: intFrom(300_000, 0),
  GATEWAY_LATE_COST_RETRY_MS: intFrom(2_000, 10),
});

/** An absolute http(s) URL without credentials, query or fragment. */
function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '' && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** Where file bytes live (DATA_DIR/blobs by default): on disk whatever the database. */
  blobDir: string;
  /** Container directories (each a capped tmpfs when run as root); every directory above it must be searchable by other users. */
  sandboxDir: string;
  /** A program's time limit in a container (SPEC: 30 s). */
  sandboxTimeoutMs: number;
  /** Running containers an account may have at once (each may hold 64 MB of memory: tmpfs). */
  containersPerAccount: number;
  /** postgres://... or an absolute SQLite file path */
  database: { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };
  logLevel: string;
  adminToken: string | undefined;
  /** Seals compaction items (AGENT_API_SECRET); unset, a secret made once is kept in the database. */
  secret: string | undefined;
  /** Bearer token GET /metrics requires; unset: /metrics is open. */
  metricsToken: string | undefined;
  bootstrapKey: string | undefined;
  /** Names this instance on the credit holds it takes; a restart releases the holds of its previous process. */
  instanceId: string;
  /** A credit hold's lease: renewed every third of it while the run lives; released by a sweep after it runs out. */
  holdLeaseMs: number;
  /** Lines of one batch in flight at once (each also takes one of the account's concurrency slots). */
  batchConcurrency: number;
  /** Batches one instance runs at once. */
  batchJobs: number;
  /** Background responses one instance runs at once. */
  backgroundResponses: number;
  /** How long a Responses WebSocket session may last (SPEC: 60 minutes). */
  wsSessionMs: number;
  /** Vector store files one instance indexes at once. */
  ingestJobs: number;
  /** Bytes of passages and vectors each account's search index may hold (SPEC: 500 MB). */
  indexBytesPerAccount: number;
  /** A module whose createEmbedder() replaces the built-in lexical embedder of the vector stores (docs/retrieval.md). */
  embedderModule: string | undefined;
  /** Credits the bootstrap account `default` gets, once per database (src/bootstrap/). */
  bootstrapCredits: number;
  /** Passed to the HTTP framework's trustProxy: addresses/CIDRs whose X-Forwarded-For is believed. */
  trustedProxies: string[];
  /** Tests only: what the outbound guard exempts from its address checks (outbound/guard.ts). */
  outboundAllow: string | undefined;
  /** The web search backend (tools/web-search/backends.ts); none: the assistant cannot browse. */
  webSearch: SearchConfig;
  /** USD charged per web search and per page opened, each as a run of its own. */
  toolPrices: { webSearchUsd: number; pageUsd: number };
  /** Calls of each web tool one answer may make. */
  webMaxUses: number;
  /** Moderation flags a category at its score threshold: one per category where given, else the default. */
  moderation: { threshold: number; thresholds: Record<string, number> };
  /** Worker threads that decode and classify images for the offline moderation engine, at most (started on the first image). */
  imageModerationWorkers: number;
  /** Images: USD per image of 1024 x 1024 by quality, in proportion to the pixels (api/images/). */
  imagePrices: { standard: number; hd: number; high: number; max: number };
  /** The agent loop's step cap and deadline (agent/agent-loop.ts): past either, the model answers with what it has. */
  agentLimits: { maxSteps: number; deadlineMs: number };
  accountConcurrency: number;
  maxRpm: number;
  bodyLimitBytes: number;
  keyCacheMs: number;
  activityFlushMs: number;
  /** SQLite: how often a worker thread checkpoints the WAL (0: SQLite does it on the committing connection). */
  sqliteCheckpointMs: number;
  shutdownGraceMs: number;
  /** How often the job runner looks for due jobs when nothing in this process enqueued one (src/jobs/). */
  jobsPollMs: number;
  /** How long a job's claim holds without renewal; a crashed instance's jobs are taken over after it. */
  jobLeaseMs: number;
  creditsPerUsd: number;
  /** Output cap used when a request sets none (and the basis of its credit reservation). */
  defaultMaxOutputTokens: number;
  /** The messages surface: what a vendor model name runs on, without thinking and with it. */
  messagesModel: 'agent' | 'agent-think';
  messagesThinkingModel: 'agent' | 'agent-think';
  /** USD per million tokens charged for the offline engine, per chat model. */
  offlinePrices: { agent: { inputPerMTok: number; outputPerMTok: number }; 'agent-think': { inputPerMTok: number; outputPerMTok: number } };
  /** USD per million input tokens of each embedding model (an alias pays its model's), offline or upstream. */
  embeddingPrices: { 'text-embedding-3-small': number; 'text-embedding-3-large': number; 'text-embedding-ada-002': number };
  /** USD per million input tokens of every decision model, offline or upstream (decisions are paid on input). */
  decisionPriceInputPerMTok: number;
  /** /v1/audio/speech: USD per million input characters (`hd`: tts-1-hd and gpt-4o-tts), offline or upstream; its worker threads (0: one per spare core, at most 2). */
  speech: { pricePerMChar: number; pricePerMCharHd: number; workers: number };
  /** Transcriptions and translations: USD per minute of audio (every model, unless the upstream's table names it), and the offline engine's programs. */
  transcription: { pricePerMinute: number; concurrency: number; queue: number; timeoutMs: number; pocketsphinx: string };
  /** The base URL published in /capabilities and /openapi.json; derived from the request when unset. */
  publicBaseUrl: string | undefined;
  /** Redis for limits and signals shared by several instances; undefined: one instance, in-process limits. */
  redisUrl: string | undefined;
  /** Limits on Redis (src/limits/redis-limits.ts): what a request gets while Redis does not answer, and how long a slot or socket outlives its holder's last renewal. */
  redisLimits: { onFailure: 'closed' | 'open'; leaseMs: number };
  /** The gateway root's upstream aggregator (docs/gateway.md); `url` undefined: forwarding answers 502. */
  gateway: {
    url: string | undefined;
    key: string | undefined;
    referer: string | undefined;
    title: string | undefined;
    timeoutMs: number;
    /** USD reserved for a request whose model has no price in the upstream's /models. */
    defaultReservationUsd: number;
    modelsRefreshMs: number;
    /** How long a cost the upstream did not report is looked up at its /generation, and how often. */
    lateCostWindowMs: number;
    lateCostRetryMs: number;
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    // One line, naming every variable at fault (start-up prints it and exits).
    // Values are not echoed: some variables hold secrets.
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.DATA_DIR);
  const database: Config['database'] =
    e.DATABASE_URL && /^postgres(ql)?:\/\//.test(e.DATABASE_URL)
      ? { kind: 'postgres', url: e.DATABASE_URL }
      : { kind: 'sqlite', file: e.DATABASE_URL ? path.resolve(e.DATABASE_URL.slice('sqlite:'.length)) : path.join(dataDir, 'agent-api.sqlite') };
  return {
    host: e.HOST,
    port: e.PORT,
    dataDir,
    blobDir: e.AGENT_API_BLOB_DIR ? path.resolve(e.AGENT_API_BLOB_DIR) : path.join(dataDir, 'blobs'),
    sandboxDir: e.AGENT_API_SANDBOX_DIR ? path.resolve(e.AGENT_API_SANDBOX_DIR) : path.join(dataDir, 'containers'),
    sandboxTimeoutMs: e.AGENT_API_SANDBOX_TIMEOUT_MS,
    containersPerAccount: e.AGENT_API_CONTAINERS_PER_ACCOUNT,
    database,
    logLevel: e.LOG_LEVEL,
    adminToken: e.AGENT_API_ADMIN_TOKEN,
    secret: e.AGENT_API_SECRET,
    metricsToken: e.AGENT_API_METRICS_TOKEN,
    bootstrapKey: e.AGENT_API_BOOTSTRAP_KEY,
    instanceId: e.AGENT_API_INSTANCE_ID ?? `${os.hostname()}:${e.PORT}`,
    holdLeaseMs: e.AGENT_API_HOLD_LEASE_MS,
    batchConcurrency: e.AGENT_API_BATCH_CONCURRENCY,
    batchJobs: e.AGENT_API_BATCH_JOBS,
    backgroundResponses: e.AGENT_API_BACKGROUND_RESPONSES,
    wsSessionMs: e.AGENT_API_WS_SESSION_MS,
    ingestJobs: e.AGENT_API_INGEST_JOBS,
    indexBytesPerAccount: e.AGENT_API_INDEX_MB_PER_ACCOUNT * 1024 * 1024,
    embedderModule: e.AGENT_API_EMBEDDER_MODULE,
    bootstrapCredits: e.AGENT_API_BOOTSTRAP_CREDITS,
    outboundAllow: e.AGENT_API_OUTBOUND_ALLOW,
    webSearch: { backend: e.WEB_SEARCH_BACKEND, url: e.WEB_SEARCH_URL, apiKey: e.WEB_SEARCH_API_KEY, module: e.WEB_SEARCH_MODULE },
    toolPrices: { webSearchUsd: e.WEB_SEARCH_PRICE_PER_CALL, pageUsd: e.WEB_PAGE_PRICE_PER_CALL },
    webMaxUses: e.AGENT_API_WEB_MAX_USES,
    agentLimits: { maxSteps: e.AGENT_API_AGENT_MAX_STEPS, deadlineMs: e.AGENT_API_AGENT_DEADLINE_MS },
    moderation: { threshold: e.MODERATION_THRESHOLD, thresholds: parseThresholds(e.MODERATION_THRESHOLDS ?? '') ?? {} },
    imageModerationWorkers: e.AGENT_API_IMAGE_MODERATION_WORKERS,
    imagePrices: { standard: e.IMAGE_PRICE_STANDARD, hd: e.IMAGE_PRICE_HD, high: e.IMAGE_PRICE_HIGH, max: e.IMAGE_PRICE_MAX },
    trustedProxies: (e.AGENT_API_TRUSTED_PROXIES ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    accountConcurrency: e.AGENT_API_ACCOUNT_CONCURRENCY,
    maxRpm: e.AGENT_API_MAX_RPM,
    bodyLimitBytes: e.AGENT_API_BODY_LIMIT_BYTES,
    keyCacheMs: e.AGENT_API_KEY_CACHE_MS,
    activityFlushMs: e.AGENT_API_ACTIVITY_FLUSH_MS,
    sqliteCheckpointMs: e.AGENT_API_SQLITE_CHECKPOINT_MS,
    shutdownGraceMs: e.AGENT_API_SHUTDOWN_GRACE_MS,
    jobsPollMs: e.AGENT_API_JOBS_POLL_MS,
    jobLeaseMs: e.AGENT_API_JOB_LEASE_MS,
    creditsPerUsd: e.AGENT_API_CREDITS_PER_USD,
    defaultMaxOutputTokens: e.AGENT_API_DEFAULT_MAX_OUTPUT_TOKENS,
    messagesModel: e.MESSAGES_MODEL,
    messagesThinkingModel: e.MESSAGES_THINKING_MODEL,
    offlinePrices: {
      agent: { inputPerMTok: e.OFFLINE_PRICE_INPUT_PER_MTOK, outputPerMTok: e.OFFLINE_PRICE_OUTPUT_PER_MTOK },
      'agent-think': { inputPerMTok: e.OFFLINE_PRICE_INPUT_PER_MTOK_THINK, outputPerMTok: e.OFFLINE_PRICE_OUTPUT_PER_MTOK_THINK },
    },
    decisionPriceInputPerMTok: e.DECISION_PRICE_INPUT_PER_MTOK,
    speech: { pricePerMChar: e.SPEECH_PRICE_PER_MCHAR, pricePerMCharHd: e.SPEECH_PRICE_PER_MCHAR_HD, workers: e.AGENT_API_SPEECH_WORKERS },
    transcription: {
      pricePerMinute: e.TRANSCRIPTION_PRICE_PER_MINUTE,
      concurrency: e.AGENT_API_TRANSCRIPTION_CONCURRENCY,
      queue: e.AGENT_API_TRANSCRIPTION_QUEUE,
      timeoutMs: e.AGENT_API_TRANSCRIPTION_TIMEOUT_MS,
      pocketsphinx: e.AGENT_API_POCKETSPHINX,
    },
    embeddingPrices: {
      'text-embedding-3-small': e.EMBEDDING_PRICE_PER_MTOK_3_SMALL,
      'text-embedding-3-large': e.EMBEDDING_PRICE_PER_MTOK_3_LARGE,
      'text-embedding-ada-002': e.EMBEDDING_PRICE_PER_MTOK_ADA_002,
    },
    publicBaseUrl: e.AGENT_API_PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    redisUrl: e.REDIS_URL,
    redisLimits: { onFailure: e.AGENT_API_LIMITS_ON_REDIS_FAILURE, leaseMs: e.AGENT_API_LIMITS_LEASE_MS },
    gateway: {
      url: e.GATEWAY_UPSTREAM_URL?.replace(/\/+$/, ''),
      key: e.GATEWAY_UPSTREAM_KEY,
      referer: e.GATEWAY_HTTP_REFERER,
      title: e.GATEWAY_X_TITLE,
      timeoutMs: e.GATEWAY_TIMEOUT_MS,
      defaultReservationUsd: e.GATEWAY_DEFAULT_RESERVATION_USD,
      modelsRefreshMs: e.GATEWAY_MODELS_REFRESH_MS,
      lateCostWindowMs: e.GATEWAY_LATE_COST_WINDOW_MS,
      lateCostRetryMs: e.GATEWAY_LATE_COST_RETRY_MS,
    },
  };
}

/**
 * Every secret the configuration holds, for scrubbers (src/secrets.ts) to keep out of
 * outside text we pass on, log or store. A new secret variable belongs here.
 */
export function configuredSecrets(config: Config): (string | undefined)[] {
  return [config.adminToken, config.secret, config.metricsToken, config.bootstrapKey, config.webSearch.apiKey, config.gateway.key];
}
