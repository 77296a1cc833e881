// One ledger for credits (DESIGN "Credits"): reserve an estimate before a model runs,
// settle to the actual charge when it ends, release the rest. An account's available
// balance is its balance minus what is held; a reservation is taken with one
// conditional UPDATE, so concurrent requests can never overdraw the account.
// While a run works its hold is a row of credit_holds (a crashed instance's holds are
// released by the stale sweep); settling deletes it and writes the ledger entry. Holds
// and entries are keyed by run: a call may hold several (migration 0021).
// The books: balance = grants (credit_transactions) - charges (credit_reservations).
// A settlement is answered before its commit on both stores (see settle): on SQLite the
// store orders it before any later statement; on PostgreSQL this process keeps the
// settlements it answered and not yet committed, and the reads that must see their
// charge wait for them (`settling`).
import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { Store } from '../store/db.ts';
import type { Database } from '../store/schema.ts';
import { postgresStatements } from './ledger-postgres.ts';
import { sqliteStatements } from './ledger-sqlite.ts';

export interface Reservation {
  accountId: string;
  /** The hold's key: its call's request id for the call's first run, `<request id>.N` for the next ones (runIdFor). */
  runId: string;
  /** The call's. */
  requestId: string;
  /** micro-credits held */
  amount: number;
}

/**
 * The run id of a call's `n`th run (0 first). Further runs sort right after the first,
 * so a call's runs are one range of the key (callRuns) without an index.
 */
export function runIdFor(requestId: string, n: number): string {
  return n === 0 ? requestId : `${requestId}.${n}`;
}

/** The key range of a call's runs: [from, to). Ids are letters, digits and `_`, all above `/`; `.` is below it. */
export function callRuns(requestId: string): { from: string; to: string } {
  return { from: requestId, to: `${requestId}/` };
}

/**
 * What a ledger entry records of its call beside the charge (migration 0020), so that an
 * activity row a crash lost can be rebuilt from the entry (activity/recover.ts).
 */
export interface CallFacts {
  endpoint: string;
  model: string | null;
}

/** What a settlement charged for. */
export interface ChargedFor {
  inputTokens: number;
  outputTokens: number;
  /** micro-USD */
  costUsd: number;
}

/**
 * The two statements every model call runs, written per dialect because they are the
 * hot path (query building would cost more than the queries themselves): on SQLite
 * prepared statements under group commit (ledger-sqlite.ts), on PostgreSQL one
 * statement per event-loop turn for all the reservations, and one for all the
 * settlements, queued in it (ledger-postgres.ts).
 */
export interface LedgerStatements {
  /**
   * A write queued now commits before any statement this process issues later (SQLite:
   * one connection, and whoever takes it commits the queued writes first), so nothing
   * this process reads afterwards can miss a settlement answered before its commit.
   * Where false (PostgreSQL: a pool of connections), the ledger keeps such settlements
   * until they commit and the reads that must see them wait (Ledger.settling).
   */
  readonly ordered: boolean;
  /** Holds `amount` when balance - reserved covers it; false when it cannot. */
  reserve(r: Reservation, keyId: string | null, call: CallFacts | null, now: number): Promise<boolean>;
  /** Releases the hold and writes the ledger entry with `charge`; false when nothing was held. */
  settle(r: Reservation, charge: number, usage: ChargedFor | null, now: number): Promise<boolean>;
}

/** A settlement whose write failed is tried again after these waits (ms), then given up (the hold stays; see settle). */
const SETTLE_RETRIES_MS = [1_000, 2_000, 4_000, 8_000, 16_000];

export class Ledger {
  private readonly db: Kysely<Database>;
  private readonly statements: LedgerStatements;
  /** The holds this process took and has not settled: known to be there, so their settlement is answered before its commit. */
  private readonly held = new Set<string>();
  /**
   * Unordered stores (PostgreSQL): the settlements answered and not yet committed (or
   * failed), by account. Their holds still count as reserved meanwhile, so the account
   * cannot be overdrawn; the reads that must see their charge wait for them (settling).
   */
  private readonly unsettled = new Map<string, Set<Promise<unknown>>>();
  /** Settlements whose write failed, waiting to be tried again (close() tries them once more). */
  private readonly retrying = new Map<string, { retry: () => Promise<void>; timer: NodeJS.Timeout }>();
  private closed = false;

  constructor(
    store: Store,
    private readonly log: Pick<FastifyBaseLogger, 'error'>,
    /** Written on every hold this process takes (AGENT_API_INSTANCE_ID). */
    readonly instanceId = 'default',
    /** How long a hold's lease lasts; this process renews its holds' leases every third of it. */
    readonly leaseMs = 60_000,
  ) {
    this.db = store.db;
    if (store.sqliteWrite) this.statements = sqliteStatements(store.sqliteWrite, instanceId, leaseMs);
    else if (store.pgPrepared) this.statements = postgresStatements(store.pgPrepared, instanceId, leaseMs);
    else throw new Error('the ledger needs SQLite or PostgreSQL');
  }

  private renewal: NodeJS.Timeout | undefined;

  /**
   * Renews the leases of every hold this instance has open, every third of a lease: one
   * statement, whatever the number of runs. An instance that dies stops renewing, and
   * its holds are released by any instance's sweep within a lease period.
   */
  startLeaseRenewal(): void {
    this.renewal ??= setInterval(() => {
      this.renewLeases().catch((err: unknown) => this.log.error({ err }, 'renewing credit hold leases failed'));
    }, Math.max(1, Math.floor(this.leaseMs / 3)));
    this.renewal.unref();
  }

  stopLeaseRenewal(): void {
    clearInterval(this.renewal);
    this.renewal = undefined;
  }

  async renewLeases(now = Date.now()): Promise<number> {
    const r = await this.db.updateTable('credit_holds').set({ lease_until: now + this.leaseMs }).where('instance_id', '=', this.instanceId).executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /**
   * What the account can still spend (balance - reserved, micro-credits; 0 for an unknown
   * account): one read, for refusing a call early. The reservation stays the guard.
   */
  async available(accountId: string): Promise<number> {
    await this.settling(accountId);
    const row = await this.db.selectFrom('accounts').select(sql<number>`balance - reserved`.as('available')).where('id', '=', accountId).executeTakeFirst();
    return row ? Number(row.available) : 0;
  }

  /**
   * Holds `amount` micro-credits for a run of a call (a request id alone: the call's
   * first run); null when the account cannot cover it.
   */
  async reserve(accountId: string, keyId: string | null, run: string | { runId: string; requestId: string }, amount: number, call: CallFacts | null = null): Promise<Reservation | null> {
    const { runId, requestId } = typeof run === 'string' ? { runId: run, requestId: run } : run;
    const reservation: Reservation = { accountId, runId, requestId, amount: Math.max(1, Math.ceil(amount)) };
    if (!(await this.statements.reserve(reservation, keyId, call, Date.now()))) return null;
    this.held.add(runId);
    return reservation;
  }

  /**
   * Resolves once the settlements this process answered before their commit, for
   * `accountId` (or for every account) and queued so far, are committed (or failed);
   * undefined when there is none, so a read on the hot path costs nothing. A read that
   * must see what this process has charged (a balance, a ledger entry, an activity row)
   * awaits it first. Always undefined on SQLite, whose store orders the reads after them.
   * Another instance's settlements are not waited for: a read there sees a charge a
   * commit later (its hold meanwhile counted as reserved).
   */
  settling(accountId?: string): Promise<void> | undefined {
    if (this.unsettled.size === 0) return undefined;
    const writes: Promise<unknown>[] = [];
    if (accountId === undefined) for (const set of this.unsettled.values()) writes.push(...set);
    else writes.push(...(this.unsettled.get(accountId) ?? []));
    return writes.length === 0 ? undefined : Promise.all(writes).then(() => undefined);
  }

  /**
   * Charges what actually ran (never more than was reserved: the estimate is an upper
   * bound) and releases the rest. Returns the micro-credits charged. Idempotent: only a
   * hold still there is settled, so a second settlement charges nothing.
   *
   * For a hold this process took and has not settled (so known to be there) the charge
   * is returned once the write is queued, not committed: the response that reports it
   * goes out without waiting for the settlement's commit. Until that commit the hold
   * still counts as reserved, so no account is overdrawn meanwhile. On SQLite the store
   * commits the queued write before any later statement; on PostgreSQL the write is kept
   * in `unsettled` until it commits and the reads that must see it wait (settling). It
   * goes out with the other settlements of its event-loop turn in one asynchronously
   * committed statement (ledger-postgres.ts): once PostgreSQL has it, a crash of this
   * process loses nothing (PostgreSQL finishes and commits it alone). A write that fails
   * is logged and, on PostgreSQL, tried again a few times (SETTLE_RETRIES_MS); given up,
   * the hold stays (counted as reserved) until this instance's next start releases it.
   */
  async settle(reservation: Reservation, actual: number, usage: ChargedFor | null = null): Promise<number> {
    const charge = Math.max(0, Math.min(reservation.amount, Math.round(actual)));
    const now = Date.now();
    // Only a hold this process took and has not settled yet is known to be there.
    if (!this.held.delete(reservation.runId)) return (await this.statements.settle(reservation, charge, usage, now)) ? charge : 0;
    const written = this.statements.settle(reservation, charge, usage, now);
    if (this.statements.ordered) written.catch((err: unknown) => this.settleFailed(reservation, err));
    else this.keepUntilCommitted(reservation, charge, usage, now, written);
    return charge;
  }

  private keepUntilCommitted(reservation: Reservation, charge: number, usage: ChargedFor | null, now: number, written: Promise<boolean>): void {
    const { accountId } = reservation;
    let pending = this.unsettled.get(accountId);
    if (!pending) this.unsettled.set(accountId, (pending = new Set()));
    const done = written.then(
      () => undefined,
      (err: unknown) => this.retryLater(reservation, charge, usage, now, err, 0),
    );
    pending.add(done);
    void done.finally(() => {
      pending.delete(done);
      if (pending.size === 0 && this.unsettled.get(accountId) === pending) this.unsettled.delete(accountId);
    });
  }

  /** A failed settlement (PostgreSQL) is tried again later; the reads waiting for it go on meanwhile (its hold still counts as reserved). */
  private retryLater(reservation: Reservation, charge: number, usage: ChargedFor | null, now: number, err: unknown, attempt: number): void {
    const wait = this.closed ? undefined : SETTLE_RETRIES_MS[attempt];
    if (wait === undefined) return this.settleFailed(reservation, err);
    this.log.error({ err, request_id: reservation.requestId, run_id: reservation.runId }, 'settling a credit reservation failed; trying again');
    const { runId } = reservation;
    const retry = () => {
      clearTimeout(this.retrying.get(runId)?.timer);
      this.retrying.delete(runId);
      // Idempotent: a write that did commit before it failed (a lost connection) finds no hold and charges nothing again.
      return this.statements.settle(reservation, charge, usage, now).then(
        () => undefined,
        (again: unknown) => this.retryLater(reservation, charge, usage, now, again, attempt + 1),
      );
    };
    this.retrying.set(runId, { retry, timer: setTimeout(() => void retry(), wait).unref() });
  }

  private settleFailed(reservation: Reservation, err: unknown): void {
    this.log.error({ err, request_id: reservation.requestId, run_id: reservation.runId }, 'settling a credit reservation failed');
  }

  /**
   * Before the store closes: waits for the settlements answered and not yet committed,
   * and tries those waiting for a retry once more now.
   */
  async close(): Promise<void> {
    await this.settling();
    this.closed = true;
    await Promise.all([...this.retrying.values()].map((r) => r.retry()));
  }

  /**
   * Holds `extra` more micro-credits on an open reservation (the next step of a tool
   * loop); false when the account cannot cover it or the hold is gone. Not the hot
   * path: one small transaction, the hold and the account updated together.
   */
  async extend(reservation: Reservation, extra: number): Promise<boolean> {
    const amount = Math.max(1, Math.ceil(extra));
    const ok = await this.db
      .transaction()
      .execute(async (trx) => {
        const held = await trx.updateTable('credit_holds').set({ amount: sql`amount + ${amount}` }).where('run_id', '=', reservation.runId).executeTakeFirst();
        if (Number(held.numUpdatedRows) === 0) return false;
        const taken = await trx
          .updateTable('accounts')
          .set({ reserved: sql`reserved + ${amount}` })
          .where('id', '=', reservation.accountId)
          .where(sql<number>`balance - reserved`, '>=', amount)
          .executeTakeFirst();
        // Not covered: undo the hold's growth with the rest of the transaction.
        if (Number(taken.numUpdatedRows) === 0) throw new NotCovered();
        return true;
      })
      .catch((err: unknown) => {
        if (err instanceof NotCovered) return false;
        throw err;
      });
    if (ok) reservation.amount += amount;
    return ok;
  }

  /**
   * A provider's cost that arrives after settlement: the run's entry is corrected to the
   * new charge and cost (the difference is applied to the balance, which is not taken
   * below zero). Returns the run's call with what all its runs now charge, or null for
   * no settled run of that id.
   */
  async correct(runId: string, newCharge: number, costUsd: number): Promise<{ requestId: string; charged: number; costUsd: number } | null> {
    // The run's entry may be a settlement this process answered and has not committed yet.
    await this.settling();
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('credit_reservations').selectAll().where('run_id', '=', runId).executeTakeFirst();
      if (!row) return null;
      const account = await trx.selectFrom('accounts').select(['balance']).where('id', '=', row.account_id).executeTakeFirstOrThrow();
      const wanted = Math.max(0, Math.round(newCharge));
      // An increase cannot take more than the account holds.
      const delta = Math.min(wanted - row.charged, Math.max(0, account.balance));
      if (delta !== 0) await trx.updateTable('accounts').set({ balance: sql`balance - ${delta}` }).where('id', '=', row.account_id).execute();
      await trx
        .updateTable('credit_reservations')
        .set({ charged: row.charged + delta, cost_usd: costUsd, ...(delta !== 0 ? { status: 'settled' as const } : {}) })
        .where('run_id', '=', runId)
        .execute();
      const { from, to } = callRuns(row.request_id);
      const call = await trx
        .selectFrom('credit_reservations')
        .select([sql<number>`sum(charged)`.as('charged'), sql<number>`sum(coalesce(cost_usd, 0))`.as('cost')])
        .where('run_id', '>=', from)
        .where('run_id', '<', to)
        .executeTakeFirstOrThrow();
      return { requestId: row.request_id, charged: Number(call.charged), costUsd: Number(call.cost) };
    });
  }

  /**
   * Releases, charging nothing, the holds no live instance vouches for: their lease ran
   * out (their instance died), or, for holds from before leases (migration 0012), they
   * are older than `olderThanMs`.
   */
  async releaseStale(olderThanMs: number, now = Date.now()): Promise<number> {
    const stale = await this.db
      .selectFrom('credit_holds')
      .selectAll()
      .where((eb) => eb.or([eb('lease_until', '<', now), eb.and([eb('lease_until', 'is', null), eb('created_at', '<', now - olderThanMs)])]))
      .execute();
    for (const r of stale) await this.settle({ accountId: r.account_id, runId: r.run_id, requestId: r.request_id, amount: r.amount }, 0);
    return stale.length;
  }

  /**
   * At start: the holds this instance took before `startedAt` belong to calls of its
   * previous process (stopped by a crash or `kill -9`), which will never settle them.
   * They are released, charging nothing, instead of waiting for the stale sweep.
   * Returns their calls' request ids.
   */
  async releasePreviousHolds(startedAt: number): Promise<string[]> {
    const orphaned = await this.db
      .selectFrom('credit_holds')
      .selectAll()
      .where('instance_id', '=', this.instanceId)
      .where('created_at', '<', startedAt)
      .execute();
    for (const r of orphaned) await this.settle({ accountId: r.account_id, runId: r.run_id, requestId: r.request_id, amount: r.amount }, 0);
    return [...new Set(orphaned.map((r) => r.request_id))];
  }
}

class NotCovered extends Error {}
