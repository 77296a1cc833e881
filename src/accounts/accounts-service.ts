// Accounts and their credit balance. Grants are recorded as credit transactions so
// the balance can always be explained.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { newId } from '../ids.ts';
import type { Database } from '../store/schema.ts';
import { fromMicro, toMicro } from './money.ts';

export interface AccountView {
  id: string;
  object: 'account';
  name: string;
  credits: number;
  reserved_credits: number;
  available_credits: number;
  created_at: number;
}

type AccountRow = Database['accounts'];

export function viewAccount(row: AccountRow): AccountView {
  return {
    id: row.id,
    object: 'account',
    name: row.name,
    credits: fromMicro(row.balance),
    reserved_credits: fromMicro(row.reserved),
    available_credits: fromMicro(row.balance - row.reserved),
    created_at: Math.floor(row.created_at / 1000),
  };
}

export class AccountsService {
  constructor(private readonly db: Kysely<Database>) {}

  async create(name: string, credits: number): Promise<AccountRow> {
    const row: AccountRow = { id: newId('acct_'), name, balance: 0, reserved: 0, created_at: Date.now() };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('accounts').values(row).execute();
      if (credits !== 0) await grant(trx, row.id, toMicro(credits), 'initial credits');
    });
    return (await this.get(row.id))!;
  }

  get(id: string): Promise<AccountRow | undefined> {
    return this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  getByName(name: string): Promise<AccountRow | undefined> {
    return this.db.selectFrom('accounts').selectAll().where('name', '=', name).executeTakeFirst();
  }

  /** By id, else by name: the admin API and the CLI take either (`default`, `acct_...`). */
  async find(idOrName: string): Promise<AccountRow | undefined> {
    return (await this.get(idOrName)) ?? (await this.getByName(idOrName));
  }

  list(): Promise<AccountRow[]> {
    return this.db.selectFrom('accounts').selectAll().orderBy('id').execute();
  }

  /** Adds (or with a negative amount, removes) credits. Returns the updated account. */
  async addCredits(id: string, amount: number, reason = 'admin grant'): Promise<AccountRow | undefined> {
    const micro = toMicro(amount);
    const found = await this.db.transaction().execute(async (trx) => {
      const exists = await trx.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst();
      if (!exists) return false;
      await grant(trx, id, micro, reason);
      return true;
    });
    return found ? this.get(id) : undefined;
  }
}

/** Adds `micro` to the balance and records why, in the caller's transaction. */
export async function grant(trx: Kysely<Database>, accountId: string, micro: number, reason: string): Promise<void> {
  await trx
    .updateTable('accounts')
    .set({ balance: sql`balance + ${micro}` })
    .where('id', '=', accountId)
    .execute();
  await trx
    .insertInto('credit_transactions')
    .values({ id: newId('ctx_'), account_id: accountId, amount: micro, reason, request_id: null, created_at: Date.now() })
    .execute();
}
