// One ledger for credits (DESIGN "Credits"): reserve an estimate before a model runs,
// settle to the actual charge when it ends, release the rest. An account's available
// balance is its balance minus open reservations; a reservation is taken with one
// conditional UPDATE, so concurrent requests can never overdraw the account.
// The books: balance = grants (credit_transactions) - charges (credit_reservations).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

export interface Reservation {
  accountId: string;
  requestId: string;
  /** micro-credits held */
  amount: number;
}

export class Ledger {
  constructor(private readonly db: Kysely<Database>) {}

  /** Holds `amount` micro-credits; null when the account cannot cover it. */
  async reserve(accountId: string, keyId: string | null, requestId: string, amount: number): Promise<Reservation | null> {
    const reservation: Reservation = { accountId, requestId, amount: Math.max(1, Math.ceil(amount)) };
    return this.db.transaction().execute(async (trx) => {
      const held = await trx
        .updateTable('accounts')
        .set({ reserved: sql`reserved + ${reservation.amount}` })
        .where('id', '=', accountId)
        .where(sql<boolean>`balance - reserved >= ${reservation.amount}`)
        .executeTakeFirst();
      if (Number(held.numUpdatedRows) !== 1) return null;
      await trx
        .insertInto('credit_reservations')
        .values({ account_id: accountId, key_id: keyId, request_id: requestId, amount: reservation.amount, status: 'open', charged: 0, created_at: Date.now(), settled_at: null })
        .execute();
      return reservation;
    });
  }

  /**
   * Charges what actually ran (never more than was reserved: the estimate is an upper
   * bound) and releases the rest. Returns the micro-credits charged. Idempotent.
   */
  async settle(reservation: Reservation, actual: number): Promise<number> {
    const charge = Math.max(0, Math.min(reservation.amount, Math.round(actual)));
    return this.db.transaction().execute(async (trx) => {
      const closed = await trx
        .updateTable('credit_reservations')
        .set({ status: charge > 0 ? 'settled' : 'released', charged: charge, settled_at: Date.now() })
        .where('request_id', '=', reservation.requestId)
        .where('status', '=', 'open')
        .executeTakeFirst();
      if (Number(closed.numUpdatedRows) !== 1) return 0;
      await trx
        .updateTable('accounts')
        .set({ reserved: sql`reserved - ${reservation.amount}`, balance: sql`balance - ${charge}` })
        .where('id', '=', reservation.accountId)
        .execute();
      return charge;
    });
  }

  /**
   * A provider's cost that arrives after settlement: the same entry is corrected to the
   * new charge (the difference is applied to the balance, which is not taken below zero).
   * Returns the charge now recorded.
   */
  async correct(requestId: string, newCharge: number): Promise<number | null> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('credit_reservations').selectAll().where('request_id', '=', requestId).where('status', '!=', 'open').executeTakeFirst();
      if (!row) return null;
      const account = await trx.selectFrom('accounts').select(['balance']).where('id', '=', row.account_id).executeTakeFirstOrThrow();
      const wanted = Math.max(0, Math.round(newCharge));
      // An increase cannot take more than the account holds.
      const delta = Math.min(wanted - row.charged, Math.max(0, account.balance));
      if (delta === 0) return row.charged;
      await trx.updateTable('accounts').set({ balance: sql`balance - ${delta}` }).where('id', '=', row.account_id).execute();
      await trx.updateTable('credit_reservations').set({ charged: row.charged + delta, status: 'settled' }).where('request_id', '=', requestId).execute();
      return row.charged + delta;
    });
  }

  /** Releases reservations left open longer than `olderThanMs` (a crashed instance's). */
  async releaseStale(olderThanMs: number, now = Date.now()): Promise<number> {
    const stale = await this.db
      .selectFrom('credit_reservations')
      .selectAll()
      .where('status', '=', 'open')
      .where('created_at', '<', now - olderThanMs)
      .execute();
    for (const r of stale) await this.settle({ accountId: r.account_id, requestId: r.request_id, amount: r.amount }, 0);
    return stale.length;
  }
}
