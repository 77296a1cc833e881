// The statements over the jobs table. A claim is atomic on both databases: on
// PostgreSQL the due rows are locked with FOR UPDATE SKIP LOCKED (concurrent claimers
// take different rows and never wait on each other); on SQLite the claim is one UPDATE
// statement on the process's single connection, so nothing runs between its read and its
// write. Every later write of a runner is conditional on its claim (owner and attempt,
// status running): a runner that lost its lease changes nothing.
import { sql, type Kysely, type RawBuilder, type UpdateQueryBuilder } from 'kysely';
import type { Store } from '../store/db.ts';
import type { Database, JobsTable } from '../store/schema.ts';
import type { Enqueued, Job, JobStatus } from './types.ts';

/** What a runner holds while it runs a job: its instance and the attempt it claimed. */
export interface Claim {
  id: string;
  owner: string;
  attempt: number;
}

/** How an attempt ended, as written to its row. */
export type Outcome =
  | { type: 'succeeded'; result: string | null }
  | { type: 'failed'; error: string }
  | { type: 'retry'; error: string; runAfter: number }
  /** Stopped by shutdown: queued again at once, the attempt not counted. */
  | { type: 'released' }
  /** A recurring job's run ended (either way): queued for its next run. */
  | { type: 'rescheduled'; runAfter: number; error: string | null; result: string | null };

export interface Renewed {
  id: string;
  attempts: number;
  cancel_requested: number;
}

type JobsUpdate<O> = UpdateQueryBuilder<Database, 'jobs', 'jobs', O>;

const FINISHED: JobStatus[] = ['succeeded', 'failed', 'cancelled'];
const PRUNE_BATCH = 1_000;

/** A cancel asked while the job ran wins over whatever status the attempt would leave. */
const unlessCancelled = (status: 'succeeded' | 'failed' | 'queued'): RawBuilder<JobStatus> =>
  sql<JobStatus>`case when cancel_requested = 1 then 'cancelled' else ${sql.lit(status)} end`;
/** The dedupe key frees up once the job has ended. */
const keyUnlessCancelled = sql<string | null>`case when cancel_requested = 1 then null else dedupe_key end`;

export class JobStore {
  readonly db: Kysely<Database>;
  private readonly postgres: boolean;

  constructor(store: Pick<Store, 'db' | 'kind'>) {
    this.db = store.db;
    this.postgres = store.kind === 'postgres';
  }

  /** Inserts the row, or with a dedupe key held by a live job, returns that job's id. */
  async insert(db: Kysely<Database>, row: JobsTable): Promise<Enqueued> {
    if (row.dedupe_key === null) {
      await db.insertInto('jobs').values(row).execute();
      return { id: row.id, created: true };
    }
    // The live job can end (and free its key) between the two statements: then insert again.
    for (let i = 0; i < 5; i++) {
      const inserted = await db
        .insertInto('jobs')
        .values(row)
        .onConflict((oc) => oc.column('dedupe_key').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (inserted) return { id: inserted.id, created: true };
      const live = await db.selectFrom('jobs').select('id').where('dedupe_key', '=', row.dedupe_key).executeTakeFirst();
      if (live) return { id: live.id, created: false };
    }
    throw new Error(`could not enqueue a job with dedupe key '${row.dedupe_key}'`);
  }

  /** One cheap indexed read: is any job of these kinds due? (Idle polls stop here.) */
  async anyDue(kinds: readonly string[], now: number): Promise<boolean> {
    if (kinds.length === 0) return false;
    const row = await this.db
      .selectFrom('jobs')
      .select('id')
      .where('status', '=', 'queued')
      .where('kind', 'in', kinds)
      .where('run_after', '<=', now)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Claims up to `limit` due jobs of `kind` for `owner`, oldest due first. */
  async claim(kind: string, limit: number, owner: string, now: number, leaseMs: number): Promise<JobsTable[]> {
    const leaseUntil = now + leaseMs;
    const query = this.postgres
      ? // MATERIALIZED: the locking subquery runs once (an IN (subquery) may be rescanned and claim more than `limit`).
        sql<JobsTable>`with next as materialized (
          select id from jobs
          where status = 'queued' and kind = ${kind} and run_after <= ${now}
          order by run_after, id limit ${limit}
          for update skip locked)
        update jobs set status = 'running', lease_owner = ${owner}, lease_until = ${leaseUntil}, attempts = jobs.attempts + 1, updated_at = ${now}
        from next where jobs.id = next.id
        returning jobs.*`
      : sql<JobsTable>`update jobs set status = 'running', lease_owner = ${owner}, lease_until = ${leaseUntil}, attempts = attempts + 1, updated_at = ${now}
        where id in (
          select id from jobs
          where status = 'queued' and kind = ${kind} and run_after <= ${now}
          order by run_after, id limit ${limit})
        returning *`;
    const { rows } = await query.execute(this.db);
    return rows.sort((a, b) => a.run_after - b.run_after || (a.id < b.id ? -1 : 1));
  }

  /** Extends the leases `owner` still holds among `ids` (unexpired, running); answers which, and whether cancel was asked. */
  async renew(owner: string, ids: readonly string[], now: number, leaseMs: number): Promise<Renewed[]> {
    if (ids.length === 0) return [];
    return this.db
      .updateTable('jobs')
      .set({ lease_until: now + leaseMs, updated_at: now })
      .where('id', 'in', ids)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .where('lease_until', '>=', now)
      .returning(['id', 'attempts', 'cancel_requested'])
      .execute();
  }

  /** Saves progress and renews the lease; undefined when the claim is no longer held. */
  async checkpoint(claim: Claim, progress: string, now: number, leaseMs: number): Promise<{ cancel_requested: number } | undefined> {
    return this.held(this.db.updateTable('jobs').set({ progress, lease_until: now + leaseMs, updated_at: now }), claim)
      .where('lease_until', '>=', now)
      .returning(['cancel_requested'])
      .executeTakeFirst();
  }

  /** Writes how the attempt ended; false when the claim was no longer held (nothing written). */
  async finish(claim: Claim, outcome: Outcome, now: number): Promise<boolean> {
    const released = { lease_owner: null, lease_until: null, updated_at: now };
    const update = this.db.updateTable('jobs');
    const query = (() => {
      switch (outcome.type) {
        case 'succeeded':
          return update.set({ ...released, status: unlessCancelled('succeeded'), result: outcome.result, dedupe_key: null });
        case 'failed':
          return update.set({ ...released, status: unlessCancelled('failed'), last_error: outcome.error, dedupe_key: null });
        case 'retry':
          return update.set({ ...released, status: unlessCancelled('queued'), last_error: outcome.error, run_after: outcome.runAfter, dedupe_key: keyUnlessCancelled });
        case 'released':
          return update.set({ ...released, status: unlessCancelled('queued'), attempts: sql`attempts - 1`, run_after: now, dedupe_key: keyUnlessCancelled });
        case 'rescheduled':
          return update.set({
            ...released,
            status: unlessCancelled('queued'),
            attempts: 0,
            run_after: outcome.runAfter,
            last_error: outcome.error,
            result: outcome.result,
            dedupe_key: keyUnlessCancelled,
          });
      }
    })();
    const result = await this.held(query, claim).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Running jobs whose lease ran out (their instance died or stalled): queued again (the
   * attempt counts), failed when no attempt is left, cancelled when that was asked.
   */
  async recoverExpired(now: number): Promise<number> {
    return this.recover(now, sql`'lease expired: instance ' || lease_owner || ' stopped renewing it'`, (q) => q.where('lease_until', '<', now));
  }

  /** At start: the jobs this instance's previous process was running (a crash, kill -9), recovered at once. */
  async recoverOwn(owner: string, now: number): Promise<number> {
    return this.recover(now, sql`'the previous process of instance ' || lease_owner || ' stopped while running it'`, (q) => q.where('lease_owner', '=', owner));
  }

  /** queued: cancelled at once; running: cancel_requested set (its runner stops it). Returns the row after. */
  async cancel(id: string, now: number): Promise<JobsTable | undefined> {
    // A job can move between queued and running between the statements: look again.
    for (let i = 0; i < 5; i++) {
      const cancelled = await this.db
        .updateTable('jobs')
        .set({ status: 'cancelled', dedupe_key: null, updated_at: now })
        .where('id', '=', id)
        .where('status', '=', 'queued')
        .returningAll()
        .executeTakeFirst();
      if (cancelled) return cancelled;
      const running = await this.db
        .updateTable('jobs')
        .set({ cancel_requested: 1, updated_at: now })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .returningAll()
        .executeTakeFirst();
      if (running) return running;
      const row = await this.get(id);
      if (!row || FINISHED.includes(row.status)) return row;
    }
    return this.get(id);
  }

  async get(id: string): Promise<JobsTable | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Moves a queued job's next run; false when no queued job matches. */
  async reschedule(ref: { id: string } | { dedupeKey: string }, runAt: number, now: number): Promise<boolean> {
    const base = this.db.updateTable('jobs').set({ run_after: runAt, updated_at: now }).where('status', '=', 'queued');
    const query = 'id' in ref ? base.where('id', '=', ref.id) : base.where('dedupe_key', '=', ref.dedupeKey);
    return Number((await query.executeTakeFirst()).numUpdatedRows) > 0;
  }

  /** A queued job's next run no later than `latest` (a recurring job whose interval got shorter). */
  async pullIn(dedupeKey: string, latest: number, now: number): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ run_after: latest, updated_at: now })
      .where('dedupe_key', '=', dedupeKey)
      .where('status', '=', 'queued')
      .where('run_after', '>', latest)
      .execute();
  }

  /** Deletes jobs that ended before `before`, in short batches; returns how many. */
  async prune(before: number): Promise<number> {
    let total = 0;
    for (;;) {
      const ids = await this.db.selectFrom('jobs').select('id').where('status', 'in', FINISHED).where('updated_at', '<', before).limit(PRUNE_BATCH).execute();
      if (ids.length === 0) return total;
      const result = await this.db
        .deleteFrom('jobs')
        .where('id', 'in', ids.map((r) => r.id))
        .where('status', 'in', FINISHED)
        .executeTakeFirst();
      total += Number(result.numDeletedRows);
      if (ids.length < PRUNE_BATCH) return total;
    }
  }

  private held<O>(query: JobsUpdate<O>, claim: Claim): JobsUpdate<O> {
    return query
      .where('id', '=', claim.id)
      .where('lease_owner', '=', claim.owner)
      .where('attempts', '=', claim.attempt)
      .where('status', '=', 'running');
  }

  private async recover(now: number, error: RawBuilder<unknown>, which: <O>(q: JobsUpdate<O>) => JobsUpdate<O>): Promise<number> {
    const exhausted = sql`cancel_requested = 1 or attempts >= max_attempts`;
    const query = this.db
      .updateTable('jobs')
      .set({
        status: sql<JobStatus>`case when cancel_requested = 1 then 'cancelled' when attempts >= max_attempts then 'failed' else 'queued' end`,
        dedupe_key: sql<string | null>`case when ${exhausted} then null else dedupe_key end`,
        last_error: error as RawBuilder<string>,
        lease_owner: null,
        lease_until: null,
        run_after: now,
        updated_at: now,
      })
      .where('status', '=', 'running');
    const result = await which(query).executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}

/** A row as the API shows it, JSON fields parsed. */
export function toJob<P, Pr, R>(row: JobsTable): Job<P, Pr, R> {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    payload: JSON.parse(row.payload) as P,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    runAfter: row.run_after,
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until,
    cancelRequested: row.cancel_requested === 1,
    progress: row.progress === null ? null : (JSON.parse(row.progress) as Pr),
    result: row.result === null ? null : (JSON.parse(row.result) as R),
    lastError: row.last_error,
    dedupeKey: row.dedupe_key,
    accountId: row.account_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
