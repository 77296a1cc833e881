// The long-lived parts of one running service, built once at start-up (app.ts) and
// handed to the HTTP layer and the API families.
import type { FastifyBaseLogger } from 'fastify';
import type { AccountsService } from './accounts/accounts-service.ts';
import type { BlobStore } from './blobs/blob-store.ts';
import type { ActivityLog } from './activity/activity-log.ts';
import type { AdminTokens } from './keys/admin-tokens.ts';
import type { Config } from './config.ts';
import type { Signals } from './cluster/signals.ts';
import type { KeysService } from './keys/keys-service.ts';
import type { KeyCaps } from './limits/key-caps.ts';
import type { Limits } from './limits/limits.ts';
import type { Ledger } from './credits/ledger.ts';
import type { JobQueue } from './jobs/job-queue.ts';
import type { JobRunner } from './jobs/job-runner.ts';
import type { Metrics } from './observability/metrics.ts';
import type { Engines } from './providers/engines.ts';
import type { OutboundGuard } from './outbound/guard.ts';
import type { SearchBackend } from './tools/web-search/backends.ts';
import type { ChatBackend } from './providers/index.ts';
import type { Store } from './store/db.ts';
import type { StoredFiles } from './api/files/stored-files.ts';

export interface Services {
  readonly config: Config;
  readonly log: FastifyBaseLogger;
  readonly store: Store;
  readonly accounts: AccountsService;
  readonly keys: KeysService;
  /** The admin API's token: AGENT_API_ADMIN_TOKEN, or the stored one. */
  readonly adminTokens: AdminTokens;
  readonly limits: Limits;
  readonly caps: KeyCaps;
  readonly activity: ActivityLog;
  readonly ledger: Ledger;
  /** What the configuration chose for chat (the upstream's host and probe, for logs and /readyz). */
  readonly chat: ChatBackend;
  /** The engines by capability and model id, with their prices (providers/engines.ts). */
  readonly engines: Engines;
  /** The only way to fetch an address a caller or a page chose (outbound/guard.ts). */
  readonly outbound: OutboundGuard;
  /** The web search backend (WEB_SEARCH_*), or null: none configured. */
  readonly webSearch: SearchBackend | null;
  /** Prometheus metrics of this app (GET /metrics). */
  readonly metrics: Metrics;
  /** Notices between the instances that share the database (cluster/signals.ts): cancels, key changes, response progress. */
  readonly signals: Signals;
  /** Durable jobs: enqueue, cancel, look up. */
  readonly jobs: JobQueue;
  /** Runs the jobs of the kinds registered with it (families register their handlers before it starts). */
  readonly jobRunner: JobRunner;
  /** File bytes (uploads, and later container files, skills, images, batch outputs). */
  readonly blobs: BlobStore;
  /** Uploaded files, per account (/v1/files; chat messages' file_id). */
  readonly files: StoredFiles;
}
