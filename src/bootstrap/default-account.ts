// The bootstrap account `default` and its starting credits, shared by the first start
// (first-run.ts) and AGENT_API_BOOTSTRAP_KEY (bootstrap-key.ts). Each step is safe when
// two instances start on one database at the same moment.
import type { Kysely } from 'kysely';
import { grant } from '../accounts/accounts-service.ts';
import { toMicro } from '../accounts/money.ts';
import { newId } from '../ids.ts';
import type { Database } from '../store/schema.ts';

export const DEFAULT_ACCOUNT = 'default';

/** Inserts a marker row; true for the one caller that inserted it (a unique key decides). */
export async function claim(db: Kysely<Database>, key: string, value: string): Promise<boolean> {
  const result = await db.insertInto('meta').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** The id of account `default`, created (with no credits) when missing. */
export async function ensureDefaultAccount(db: Kysely<Database>): Promise<string> {
  await db
    .insertInto('accounts')
    .values({ id: newId('acct_'), name: DEFAULT_ACCOUNT, balance: 0, reserved: 0, created_at: Date.now() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('accounts').select('id').where('name', '=', DEFAULT_ACCOUNT).executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Grants AGENT_API_BOOTSTRAP_CREDITS to the bootstrap account, once per database: the
 * `bootstrap_credits` marker records it (with the amount, 0 included), so restarts and a
 * later AGENT_API_BOOTSTRAP_KEY grant nothing more. Returns the credits granted now.
 */
export async function grantStartingCreditsOnce(db: Kysely<Database>, accountId: string, credits: number): Promise<number> {
  const once = async (trx: Kysely<Database>) => {
    if (!(await claim(trx, 'bootstrap_credits', JSON.stringify({ account_id: accountId, credits, at: Date.now() })))) return 0;
    if (credits > 0) await grant(trx, accountId, toMicro(credits), 'bootstrap credits');
    return credits;
  };
  // The marker and the grant commit together (in the caller's transaction when there is one).
  return db.isTransaction ? once(db) : db.transaction().execute(once);
}
