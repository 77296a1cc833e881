// The producer side of jobs: enqueue (inside a caller's transaction when the job must
// exist exactly when the caller's rows do), cancel, look up, reschedule. Runners in this
// process subscribe, so a new job starts at once instead of at the next poll. A cancel of
// a running job is a signal (cluster/signals.ts): it reaches the handler at once on
// whichever instance runs it (over Redis when several share the database); a signal
// lost to a Redis outage is made up for by the runner's next lease renewal, which reads
// the same `cancel_requested` flag.
import type { Kysely, Transaction } from 'kysely';
import { LocalSignals, type Signals } from '../cluster/signals.ts';
import { newId } from '../ids.ts';
import type { Store } from '../store/db.ts';
import type { Database } from '../store/schema.ts';
import { JobStore, toJob } from './job-store.ts';
import type { EnqueueOptions, Enqueued, Job, JobKind } from './types.ts';

/** What a runner in this process hears from the queue. */
export interface QueueListener {
  /** Jobs were enqueued (committed). */
  enqueued(): void;
  /** Cancel was asked for a running job. */
  cancelRequested(id: string): void;
}

/** Finished jobs are kept this long (for inspection), then pruned. */
export const FINISHED_JOB_RETENTION_MS = 7 * 24 * 60 * 60_000;

export class JobQueue {
  readonly store: JobStore;
  private readonly listeners = new Set<QueueListener>();

  constructor(
    store: Pick<Store, 'db' | 'kind'>,
    private readonly signals: Signals = new LocalSignals(),
  ) {
    this.store = new JobStore(store);
    // Every instance's runners hear every cancel; one not running the job ignores it.
    signals.subscribe('job.cancel', (id) => {
      for (const l of this.listeners) l.cancelRequested(id);
    });
  }

  /**
   * Adds a job. With `db` (a caller's transaction) the job commits with the caller's
   * rows; it then starts at the next poll unless the caller calls nudge() after the
   * commit (transaction() below does both).
   */
  async enqueue<P>(kind: JobKind<P, any, any>, payload: P, options: EnqueueOptions & { db?: Kysely<Database> } = {}): Promise<Enqueued> {
    const now = Date.now();
    const maxAttempts = options.maxAttempts ?? kind.defaults.maxAttempts;
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new Error('maxAttempts must be a whole number of at least 1');
    const enqueued = await this.store.insert(options.db ?? this.store.db, {
      id: newId('job_'),
      kind: kind.name,
      payload: JSON.stringify(payload ?? null),
      status: 'queued',
      attempts: 0,
      max_attempts: maxAttempts,
      run_after: options.runAt ?? now,
      lease_owner: null,
      lease_until: null,
      cancel_requested: 0,
      progress: null,
      result: null,
      last_error: null,
      dedupe_key: options.dedupeKey ?? null,
      account_id: options.accountId ?? null,
      created_at: now,
      updated_at: now,
    });
    if (!options.db && enqueued.created) this.nudge();
    return enqueued;
  }

  /** Runs `fn` in a transaction (enqueue with `{ db: trx }` inside it) and nudges the runners after the commit. */
  async transaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    const result = await this.store.db.transaction().execute(fn);
    this.nudge();
    return result;
  }

  /**
   * A queued job is cancelled at once; a running one is asked to stop (its handler's
   * signal is aborted at once, on whichever instance runs it) and ends `cancelled`.
   * Returns the job after; undefined when there is none.
   */
  async cancel<P = unknown, Pr = unknown, R = unknown>(id: string): Promise<Job<P, Pr, R> | undefined> {
    const row = await this.store.cancel(id, Date.now());
    if (row?.status === 'running') await this.signals.publish('job.cancel', id);
    return row && toJob<P, Pr, R>(row);
  }

  async get<P = unknown, Pr = unknown, R = unknown>(id: string): Promise<Job<P, Pr, R> | undefined> {
    const row = await this.store.get(id);
    return row && toJob<P, Pr, R>(row);
  }

  /** Moves a queued job's next run (e.g. run a recurring job now: `{ dedupeKey: recurringKey(kind) }`); false when none is queued. */
  async reschedule(ref: { id: string } | { dedupeKey: string }, runAt: number): Promise<boolean> {
    const moved = await this.store.reschedule(ref, runAt, Date.now());
    if (moved && runAt <= Date.now()) this.nudge();
    return moved;
  }

  /** Tells the runners of this process to look for due jobs now. */
  nudge(): void {
    for (const l of this.listeners) l.enqueued();
  }

  subscribe(listener: QueueListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** The dedupe key of a recurring kind's one row. */
export function recurringKey(kind: JobKind<any, any, any> | string): string {
  return `recurring:${typeof kind === 'string' ? kind : kind.name}`;
}
