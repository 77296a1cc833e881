// The jobs API as producers (the families that enqueue work) and handlers see it. A
// JobKind names a kind and carries its payload, progress and result types, so the code
// that enqueues and the handler that runs agree on them.
import type { JobsTable } from '../store/schema.ts';

export type JobStatus = JobsTable['status'];

export interface JobKindDefaults {
  /** Claims before the job fails (a claim cut off by a crash counts); default 3. */
  maxAttempts?: number;
}

/** A kind of job. `Progress` is what its handler checkpoints; `Result` what it returns. */
export interface JobKind<Payload = unknown, Progress = unknown, Result = unknown> {
  readonly name: string;
  readonly defaults: Required<JobKindDefaults>;
  /** Type carrier only, never set. */
  readonly types?: { payload: Payload; progress: Progress; result: Result };
}

const KIND_NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/;

export function jobKind<Payload = null, Progress = never, Result = unknown>(name: string, defaults: JobKindDefaults = {}): JobKind<Payload, Progress, Result> {
  if (!KIND_NAME.test(name)) throw new Error(`job kind '${name}': lower case letters, digits, '.', '_', '-', at most 100`);
  const maxAttempts = defaults.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new Error(`job kind '${name}': maxAttempts must be a whole number of at least 1`);
  return { name, defaults: { maxAttempts } };
}

/** A job as stored, JSON fields parsed. */
export interface Job<Payload = unknown, Progress = unknown, Result = unknown> {
  id: string;
  kind: string;
  status: JobStatus;
  payload: Payload;
  /** Claims so far (the running one included). */
  attempts: number;
  maxAttempts: number;
  /** Not claimed before this time (Unix ms). */
  runAfter: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  /** Cancel was asked while it ran; it ends `cancelled`. */
  cancelRequested: boolean;
  progress: Progress | null;
  result: Result | null;
  lastError: string | null;
  dedupeKey: string | null;
  accountId: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface EnqueueOptions {
  /** Not before this time (Unix ms); default now. */
  runAt?: number;
  /** Default: the kind's. */
  maxAttempts?: number;
  /** At most one live (queued or running) job per key: enqueuing again returns the live one. */
  dedupeKey?: string;
  accountId?: string;
}

export interface Enqueued {
  id: string;
  /** false: a live job with the same dedupe key was there already (its id is returned). */
  created: boolean;
}

/** Why a handler's signal was aborted. */
export type InterruptReason = 'cancelled' | 'shutdown' | 'lease-lost';

/**
 * The reason of an aborted job signal. A handler that stops because of it should throw
 * (`ctx.signal.throwIfAborted()`): after `shutdown` the job is then requeued without
 * counting the attempt, and resumes from its last checkpoint on the next claim; after
 * `cancelled` it ends cancelled; after `lease-lost` nothing it does is recorded.
 */
export class JobInterrupted extends Error {
  override name = 'JobInterrupted';
  constructor(readonly reason: InterruptReason) {
    super(`job interrupted: ${reason}`);
  }
}

/** Thrown by a handler: the job fails now, whatever attempts are left. */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';
}

export interface JobContext<Payload, Progress> {
  readonly id: string;
  readonly kind: string;
  readonly payload: Payload;
  readonly accountId: string | null;
  /** 1 on the first claim. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** What this job last saved with checkpoint() (in this attempt or an earlier one); null before. */
  readonly progress: Progress | null;
  /** Aborted on cancel, shutdown or a lost lease; the reason is a JobInterrupted. */
  readonly signal: AbortSignal;
  /**
   * Saves progress durably (a later attempt starts from it) and renews the lease. Throws
   * JobInterrupted('lease-lost') when this runner no longer holds the job: whoever holds
   * it now owns the progress.
   */
  checkpoint(progress: Progress): Promise<void>;
}

export type JobHandler<Payload, Progress, Result> = (ctx: JobContext<Payload, Progress>) => Promise<Result>;

export interface HandlerOptions {
  /** Jobs of this kind one runner runs at once; default 1. */
  concurrency?: number;
  /** Retry delay after a failed attempt n: baseMs * 2^(n-1), at most maxMs, less up to half at random. */
  backoff?: { baseMs?: number; maxMs?: number };
}
