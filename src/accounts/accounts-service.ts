// Accounts and their credit balance. Grants are recorded as credit transactions so
// the balance can always be explained.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { newId } from '../ids.ts';
import type { Database } from '../store/schema.ts';
import { CreditsRefused, fromMicro, MAX_CREDITS, MAX_MICRO, toMicro } from './money.ts';

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
  constructor(
    private readonly db: Kysely<Database>,
    /**
     * The credit settlements this process answered and has not committed yet
     * (Ledger.settling, PostgreSQL): every read of a balance waits for them, so it shows
     * what the responses already reported. None in a process that serves no calls (the CLI).
     */
    private readonly settling: () => Promise<void> | undefined = () => undefined,
  ) {}

  async create(name: string, credits: number): Promise<AccountRow> {
    const row: AccountRow = { id: newId('acct_'), name, balance: 0, reserved: 0, created_at: Date.now() };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('accounts').values(row).execute();
      if (credits !== 0 && !(await grant(trx, row.id, toMicro(credits), 'initial credits'))) {
        throw new CreditsRefused(`An account starts with at most ${MAX_CREDITS} credits.`);
      }
    });
    return (await this.get(row.id))!;
  }

  async get(id: string): Promise<AccountRow | undefined> {
    await this.settling();
    return this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async getByName(name: string): Promise<AccountRow | undefined> {
    await this.settling();
    return this.db.selectFrom('accounts').selectAll().where('name', '=', name).executeTakeFirst();
  }

  /** By id, else by name: the admin API and the CLI take either (`default`, `acct_...`). */
  async find(idOrName: string): Promise<AccountRow | undefined> {
    return (await this.get(idOrName)) ?? (await this.getByName(idOrName));
  }

  async list(): Promise<AccountRow[]> {
    await this.settling();
    return this.db.selectFrom('accounts').selectAll().orderBy('id').execute();
  }

  /**
   * Adds (or with a negative amount, removes) credits. Returns the updated account, or
   * undefined when there is none. Throws CreditsRefused when the balance would pass
   * MAX_CREDITS, or when a debit would take the available credits (balance minus what
   * running requests hold) below zero and it is not a correction.
   */
  async addCredits(id: string, amount: number, reason = 'admin grant', options: { correction?: boolean } = {}): Promise<AccountRow | undefined> {
    const micro = toMicro(amount);
    // A debit is checked against what is available: the holds of settled calls no longer count.
    await this.settling();
    const outcome = await this.db.transaction().execute(async (trx) => {
      const applied = await grant(trx, id, micro, reason, options.correction === true);
      if (applied) return 'applied';
      const row = await trx.selectFrom('accounts').select(['balance', 'reserved']).where('id', '=', id).executeTakeFirst();
      if (!row) return 'missing';
      if (Number(row.balance) + micro > MAX_MICRO) {
        throw new CreditsRefused(`This would take the balance above ${MAX_CREDITS} credits (it holds ${fromMicro(Number(row.balance))}).`);
      }
      throw new CreditsRefused(
        `This would take the account's available credits below zero (available: ${fromMicro(Number(row.balance) - Number(row.reserved))}). Send "correction": true to debit anyway.`,
      );
    });
    return outcome === 'applied' ? this.get(id) : undefined;
  }
}

/**
 * Adds `micro` to the balance and records why, in the caller's transaction: one
 * conditional UPDATE, so concurrent grants and debits cannot pass the bounds between a
 * read and a write; the transaction row is written only when it applied.
 */
export async function grant(trx: Kysely<Database>, accountId: string, micro: number, reason: string, correction = false): Promise<boolean> {
  let update = trx
    .updateTable('accounts')
    .set({ balance: sql`balance + ${micro}` })
    .where('id', '=', accountId)
    .where(sql<number>`balance + ${micro}`, '<=', MAX_MICRO);
  if (micro < 0 && !correction) update = update.where(sql<number>`balance - reserved + ${micro}`, '>=', 0);
  const result = await update.executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await trx
    .insertInto('credit_transactions')
    .values({ id: newId('ctx_'), account_id: accountId, amount: micro, reason, request_id: null, created_at: Date.now() })
    .execute();
  return true;
}
