// The periodic sweeps, as recurring jobs: one row per kind, so one instance at a time
// runs each, and a sweep cut off by a crash is run again by whichever instance recovers
// it. The work itself belongs to its owners (app.ts passes it in; jobs/ does not import
// the API families).
import { FINISHED_JOB_RETENTION_MS, type JobQueue } from './job-queue.ts';
import type { JobRunner } from './job-runner.ts';
import { jobKind } from './types.ts';

export const sweepStoredCompletions = jobKind<null, never, number>('chat.stored-completions.expire');
export const sweepStoredResponses = jobKind<null, never, number>('responses.expire');
export const sweepVectorStores = jobKind<null, never, number>('vector_stores.expire');
export const sweepContainers = jobKind<null, never, number>('containers.expire');
export const releaseStaleHolds = jobKind<null, never, number>('credits.stale-holds.release');
export const pruneJobs = jobKind<null, never, number>('jobs.prune');

/** Holds from before leases (migration 0012): no model call runs this long. */
export const STALE_HOLD_MS = 60 * 60_000;

export interface Sweeps {
  /** Deletes expired stored chat completions; returns how many. */
  expireStoredCompletions(): Promise<number>;
  /** Deletes expired stored responses; returns how many. */
  expireStoredResponses(): Promise<number>;
  /** Expires vector stores idle past their expires_after (their passages go); returns how many. */
  expireVectorStores(): Promise<number>;
  /** Expires containers idle past their expires_after (their files go); returns how many. */
  expireContainers(): Promise<number>;
  /** Releases credit holds whose lease ran out (or, without a lease, older than `olderThanMs`), charging nothing; returns how many. */
  releaseStaleHolds(olderThanMs: number): Promise<number>;
  /** How often the stale holds are swept: once a hold lease period. */
  staleHoldsEveryMs: number;
}

export function registerHousekeeping(runner: JobRunner, queue: JobQueue, sweeps: Sweeps): void {
  runner
    .recurring(sweepStoredCompletions, 60 * 60_000, () => sweeps.expireStoredCompletions())
    .recurring(sweepStoredResponses, 60 * 60_000, () => sweeps.expireStoredResponses())
    .recurring(sweepVectorStores, 10 * 60_000, () => sweeps.expireVectorStores())
    // Containers expire after minutes idle (1 to 60): swept every minute.
    .recurring(sweepContainers, 60_000, () => sweeps.expireContainers())
    .recurring(releaseStaleHolds, sweeps.staleHoldsEveryMs, () => sweeps.releaseStaleHolds(STALE_HOLD_MS))
    .recurring(pruneJobs, 60 * 60_000, () => queue.store.prune(Date.now() - FINISHED_JOB_RETENTION_MS));
}
