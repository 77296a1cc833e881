// Typed tables for Kysely. Money is stored as integer micro-units (1e-6) so that
// SQLite and PostgreSQL add and compare it exactly; times are Unix milliseconds.
import type { Generated } from 'kysely';

export interface AccountsTable {
  id: string;
  name: string;
  /** micro-credits */
  balance: number;
  /** micro-credits held by open reservations */
  reserved: number;
  created_at: number;
}

export interface CreditTransactionsTable {
  id: string;
  account_id: string;
  /** micro-credits; positive adds, negative charges */
  amount: number;
  reason: string;
  request_id: string | null;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  /** sha256 of the secret, hex. The secret itself is never stored. */
  key_hash: string;
  /** e.g. "sk-agent-abcd...wxyz", enough to recognise a key in a list */
  key_hint: string;
  /** JSON PermissionSet */
  permissions: string;
  /** JSON string[] | null (null: every chat model) */
  models: string | null;
  /** JSON string[] | null (null: any address) */
  ip_allowlist: string | null;
  rpm: number | null;
  /** The key's own output cap in tokens (migration 0007); null: none. */
  max_output_tokens: number | null;
  /** JSON KeyLimit[] */
  limits: string;
  paused: number;
  revoked_at: number | null;
  expires_at: number | null;
  created_at: number;
  last_used_at: number | null;
}

export interface KeyUsageTable {
  key_id: string;
  /** day | week | month | ever */
  period: string;
  period_start: number;
  requests: number;
  tokens: number;
  /** micro-credits */
  credits: number;
  /** micro-USD */
  spend: number;
}

export interface ActivityTable {
  /** primary key: one row per request */
  request_id: string;
  created_at: number;
  account_id: string | null;
  key_id: string | null;
  method: string;
  endpoint: string;
  model: string | null;
  status: number;
  error_code: string | null;
  client_request_id: string | null;
  end_user: string | null;
  safety_identifier: string | null;
  input_tokens: number;
  output_tokens: number;
  /** micro-credits */
  credits_reserved: number;
  credits_settled: number;
  /** micro-USD */
  cost_usd: number;
  latency_ms: number;
  /** JSON {flagged: categories} when the key's Moderate requests switch moderated the request; null otherwise (migration 0023). */
  moderation?: string | null;
  /** A gateway request: the upstream's generation id, whether it streamed (1/0), how it finished (migration 0025); null elsewhere. */
  upstream_id?: string | null;
  streamed?: number | null;
  finish_reason?: string | null;
}

/** A ledger entry: one per run (a call's model run, step or fee), written when it settled (migrations 0003, 0005, 0021). */
export interface CreditReservationsTable {
  /** primary key: the call's request id for its first run, `<request id>.N` for its further runs (migration 0021) */
  run_id: string;
  /** The call's request id (filled for older entries by 0021). */
  request_id: string;
  account_id: string;
  key_id: string | null;
  /** micro-credits that were held */
  amount: number;
  /** 'open' only in databases from before migration 0005 moved open holds to credit_holds */
  status: 'open' | 'settled' | 'released';
  /** micro-credits charged */
  charged: number;
  created_at: number;
  settled_at: number | null;
  /** The instance whose call it was (the hold's), and what an activity row needs (migration 0020); null on older entries. */
  instance_id: string | null;
  endpoint: string | null;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  /** micro-USD */
  cost_usd: number | null;
}

/** Credits held for a model call in flight (migration 0005); deleted when it settles. */
export interface CreditHoldsTable {
  /** As in credit_reservations (migration 0021). */
  run_id: string;
  request_id: string;
  account_id: string;
  key_id: string | null;
  /** micro-credits held */
  amount: number;
  created_at: number;
  /** The instance that took the hold (AGENT_API_INSTANCE_ID); null for holds from before migration 0008. */
  instance_id: string | null;
  /** Unix ms until which the hold's instance vouches for it (renewed while the run lives); null before migration 0012. */
  lease_until: number | null;
  /** The call's endpoint and model, copied to the ledger entry (migration 0020). */
  endpoint: string | null;
  model: string | null;
}

/** A batch (migration 0013); times are Unix ms. */
export interface BatchesTable {
  /** batch_… */
  id: string;
  account_id: string;
  key_id: string;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';
  output_file_id: string | null;
  error_file_id: string | null;
  /** JSON: {code, message, param, line}[] when validation failed */
  errors: string | null;
  total: number;
  completed: number;
  failed: number;
  /** micro-credits */
  credits: number;
  input_tokens: number;
  output_tokens: number;
  /** JSON object or null */
  metadata: string | null;
  caller_ip: string;
  job_id: string | null;
  created_at: number;
  expires_at: number;
  in_progress_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  /** Which surface's batch (migration 0024): `v1` (/v1/batches) or `messages` (/v1/messages/batches). */
  surface: 'v1' | 'messages';
  /** A messages-style batch: the blob holding its requests as batch input lines (JSONL). */
  input_blob: string | null;
  /** Requests the 24 h window left unrun (also counted in `failed`). */
  expired: number;
}

/** A batch line that has started (migration 0013): its outcome once done. */
export interface BatchLinesTable {
  batch_id: string;
  line_no: number;
  state: 'running' | 'done';
  /** JSON: the output line */
  outcome: string | null;
  ok: number;
}

/** A `store: true` chat completion, kept 30 days (migration 0002). */
export interface ChatCompletionsTable {
  /** chatcmpl-… */
  id: string;
  account_id: string;
  model: string;
  created_at: number;
  /** created_at + 30 days; rows past it are invisible before the sweep deletes them */
  expires_at: number;
  /** JSON Record<string, string> ('{}' when none) */
  metadata: string;
  /** JSON chat.completion object as returned to the client */
  completion: string;
  /** JSON array of the request messages as sent */
  messages: string;
}

/** One metadata pair of a stored chat completion, for SQL filtering; deleted with it (cascade). */
export interface ChatCompletionMetadataTable {
  completion_id: string;
  key: string;
  value: string;
}

/** Markers of one-time work: `first_run`, `bootstrap_credits` (src/bootstrap/). */
export interface MetaTable {
  key: string;
  value: string;
}

/** The stored admin token (migration 0009): one row, id 'admin'; the token itself is never stored. */
export interface AdminTokensTable {
  id: string;
  /** sha256 of the token, hex */
  token_hash: string;
  created_at: number;
}

/** Durable work (migration 0010, src/jobs/): claimed by one runner at a time under a lease. */
export interface JobsTable {
  /** job_… */
  id: string;
  /** what runs it, e.g. `chat.stored-completions.expire` */
  kind: string;
  /** JSON */
  payload: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  /** claims so far, this one included while running */
  attempts: number;
  max_attempts: number;
  /** not claimed before this time */
  run_after: number;
  /** the instance running it (AGENT_API_INSTANCE_ID); null unless running */
  lease_owner: string | null;
  /** its lease ends here unless renewed; null unless running */
  lease_until: number | null;
  /** 1 once cancel was asked while it ran; the runner stops it at its next renewal */
  cancel_requested: number;
  /** JSON checkpoint the handler saved; a later attempt resumes from it */
  progress: string | null;
  /** JSON of what the handler returned */
  result: string | null;
  last_error: string | null;
  /** unique among live (queued, running) jobs; cleared when the job ends */
  dedupe_key: string | null;
  account_id: string | null;
  created_at: number;
  updated_at: number;
}

/** An uploaded file (migration 0011); its bytes are the blob `blob_key`. */
export interface FilesTable {
  /** file-… */
  id: string;
  account_id: string;
  purpose: string;
  filename: string;
  bytes: number;
  content_type: string;
  blob_key: string;
  /** sha256 of the content, hex */
  sha256: string;
  /** 'processed': an upload is usable once stored */
  status: string;
  created_at: number;
  /** null: kept until deleted */
  expires_at: number | null;
}

/** A batch of a background response's events as it ran (migration 0026). */
export interface ResponseEventsTable {
  response_id: string;
  /** The first event's sequence_number, and the last one's. */
  seq: number;
  last_seq: number;
  /** The job attempt that produced them. */
  attempt: number;
  /** JSON array of events */
  events: string;
  created_at: number;
}

export interface ResponsesTable {
  /** resp_… */
  id: string;
  account_id: string;
  status: string;
  background: number;
  previous_response_id: string | null;
  conversation_id: string | null;
  /** JSON response object */
  response: string;
  /** JSON input items */
  input_items: string;
  /** JSON: a background run's checked request and key id, until it has run */
  request: string | null;
  job_id: string | null;
  created_at: number;
  expires_at: number;
}

export interface ConversationsTable {
  /** conv_… */
  id: string;
  account_id: string;
  /** JSON Record<string, string> */
  metadata: string;
  next_seq: number;
  created_at: number;
}

export interface ConversationItemsTable {
  conversation_id: string;
  seq: number;
  item_id: string;
  /** JSON item */
  item: string;
}

export interface Database {
  accounts: AccountsTable;
  credit_transactions: CreditTransactionsTable;
  api_keys: ApiKeysTable;
  key_usage: KeyUsageTable;
  activity: ActivityTable;
  credit_reservations: CreditReservationsTable;
  credit_holds: CreditHoldsTable;
  batches: BatchesTable;
  batch_lines: BatchLinesTable;
  responses: ResponsesTable;
  response_events: ResponseEventsTable;
  conversations: ConversationsTable;
  conversation_items: ConversationItemsTable;
  meta: MetaTable;
  admin_tokens: AdminTokensTable;
  chat_completions: ChatCompletionsTable;
  chat_completion_metadata: ChatCompletionMetadataTable;
  jobs: JobsTable;
  files: FilesTable;
  vector_stores: VectorStoresTable;
  vector_store_files: VectorStoreFilesTable;
  vector_store_file_batches: VectorStoreFileBatchesTable;
  vector_store_chunks: VectorStoreChunksTable;
  containers: ContainersTable;
  container_files: ContainerFilesTable;
  skills: SkillsTable;
  skill_versions: SkillVersionsTable;
  mcp_approvals: McpApprovalsTable;
}

export interface VectorStoresTable {
  /** vs_… */
  id: string;
  account_id: string;
  name: string | null;
  description: string | null;
  /** JSON Record<string, string> */
  metadata: string;
  expires_after_days: number | null;
  created_at: number;
  last_active_at: number;
  expired_at: number | null;
  index_version: number;
}

export interface VectorStoreFilesTable {
  vector_store_id: string;
  /** the uploaded file's id (file-…) */
  file_id: string;
  account_id: string;
  batch_id: string | null;
  status: 'in_progress' | 'completed' | 'failed' | 'cancelled';
  /** JSON {code, message} */
  last_error: string | null;
  /** JSON attributes */
  attributes: string | null;
  /** JSON {max_chunk_size_tokens, chunk_overlap_tokens} */
  chunking: string;
  usage_bytes: number;
  chunk_count: number;
  job_id: string | null;
  created_at: number;
  seq: number;
}

export interface VectorStoreFileBatchesTable {
  /** vsfb_… */
  id: string;
  vector_store_id: string;
  account_id: string;
  status: 'in_progress' | 'cancelling' | 'cancelled' | 'completed';
  created_at: number;
}

export interface VectorStoreChunksTable {
  id: Generated<number>;
  account_id: string;
  vector_store_id: string;
  file_id: string;
  /** the chunk's position in its file */
  seq: number;
  text: string;
  /** leading characters that repeat the end of the previous passage (the overlap) */
  overlap_chars: number;
  tokens: number;
  /** what the chunk counts against the account's index cap: its text's UTF-8 bytes and its vector's */
  bytes: number;
  /** float32 little-endian */
  embedding: Uint8Array;
}

export interface SkillsTable {
  /** skill_… */
  id: string;
  account_id: string;
  /** the default version's */
  name: string;
  description: string;
  default_version: number;
  next_version: number;
  created_at: number;
}

export interface SkillVersionsTable {
  /** skillver_… */
  id: string;
  skill_id: string;
  account_id: string;
  version: number;
  name: string;
  description: string;
  /** JSON SkillFileEntry[]: [{path, blob_key, bytes}] */
  manifest: string;
  file_count: number;
  bytes: number;
  created_at: number;
}

export type { Generated };

export interface ContainersTable {
  /** cntr_… */
  id: string;
  account_id: string;
  name: string;
  /** 1 to 60 minutes after last_active_at */
  expires_after_minutes: number;
  /** JSON [{skill_id, version}] or null */
  skills: string | null;
  created_at: number;
  last_active_at: number;
  /** set when the expiry sweep removed the container's files */
  expired_at: number | null;
  /** bumped on every change to the files: an instance with an older local copy rebuilds it */
  files_version: number;
}

export interface ContainerFilesTable {
  /** cfile_… */
  id: string;
  container_id: string;
  account_id: string;
  /** /mnt/data/<relative path> */
  path: string;
  bytes: number;
  source: 'user' | 'assistant';
  created_at: number;
  /** the bytes in the blob store (null: kept on the host that wrote it only) */
  blob_key: string | null;
}

/** One answered MCP approval request (migration 0022): claimed once, before the call runs. */
export interface McpApprovalsTable {
  account_id: string;
  approval_request_id: string;
  /** 1 approved, 0 declined */
  approved: number;
  request_id: string;
  created_at: number;
}
