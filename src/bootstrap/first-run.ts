// The first start on a database with no keys: account `default` with the starting
// credits (AGENT_API_BOOTSTRAP_CREDITS), a key with every switch and, when
// AGENT_API_ADMIN_TOKEN is unset, an admin token. Their secrets are returned for main.ts
// to print once; only hashes are stored, so no later start can show them again.
import type { Kysely } from 'kysely';
import { fromMicro } from '../accounts/money.ts';
import type { Config } from '../config.ts';
import { newAdminToken, storeAdminToken } from '../keys/admin-tokens.ts';
import { hashSecret, KeysService } from '../keys/keys-service.ts';
import { firstKeyPermissions } from '../keys/permissions.ts';
import type { Database } from '../store/schema.ts';
import { claim, DEFAULT_ACCOUNT, ensureDefaultAccount, grantStartingCreditsOnce } from './default-account.ts';

export interface FirstRun {
  /** The key this start created, when it created one. */
  apiKey?: string;
  /** The admin token this start generated, when it generated one. */
  adminToken?: string;
  /** The bootstrap account and its available credits, when this start was the first. */
  account?: { name: string; credits: number };
}

export async function firstRun(db: Kysely<Database>, config: Pick<Config, 'bootstrapKey' | 'bootstrapCredits' | 'adminToken'>): Promise<FirstRun> {
  return db.transaction().execute(async (trx) => {
    // One start ever wins this marker. On PostgreSQL a second instance starting at the
    // same moment waits here until the first commits, then finds it taken.
    if (!(await claim(trx, 'first_run', JSON.stringify({ at: Date.now() })))) return {};
    // A database already in use before first-run existed (it has keys): nothing to do.
    // The AGENT_API_BOOTSTRAP_KEY key, ensured just before, does not count.
    let keys = trx.selectFrom('api_keys').select('id');
    if (config.bootstrapKey) keys = keys.where('key_hash', '!=', hashSecret(config.bootstrapKey));
    if (await keys.limit(1).executeTakeFirst()) return {};

    const out: FirstRun = {};
    const accountId = await ensureDefaultAccount(trx);
    await grantStartingCreditsOnce(trx, accountId, config.bootstrapCredits);
    if (!config.bootstrapKey) {
      const created = await new KeysService(trx, 0).create({ account_id: accountId, name: DEFAULT_ACCOUNT, permissions: firstKeyPermissions() });
      out.apiKey = created.secret;
    }
    if (!config.adminToken) {
      const token = newAdminToken();
      if (await storeAdminToken(trx, token, { replace: false })) out.adminToken = token;
    }
    const account = await trx.selectFrom('accounts').select(['balance', 'reserved']).where('id', '=', accountId).executeTakeFirstOrThrow();
    out.account = { name: DEFAULT_ACCOUNT, credits: fromMicro(account.balance - account.reserved) };
    return out;
  });
}
