// AGENT_API_BOOTSTRAP_KEY: start-up makes sure account `default` and a key with exactly
// this secret exist (every switch on but Moderate requests, a restriction; no limits), and grants the key's account the
// starting credits once. Idempotent, and safe when two instances start at once.
import type { Kysely } from 'kysely';
import { hashSecret, KeysService } from '../keys/keys-service.ts';
import { firstKeyPermissions } from '../keys/permissions.ts';
import type { Database } from '../store/schema.ts';
import { ensureDefaultAccount, grantStartingCreditsOnce } from './default-account.ts';

export async function ensureBootstrapKey(db: Kysely<Database>, secret: string, startingCredits: number): Promise<void> {
  const keys = new KeysService(db, 0);
  const hash = hashSecret(secret);
  let key = await keys.getByHash(hash);
  if (!key) {
    const accountId = await ensureDefaultAccount(db);
    try {
      key = (await keys.create({ account_id: accountId, name: 'bootstrap', permissions: firstKeyPermissions() }, secret)).record;
    } catch (err) {
      // Another instance starting at the same moment may have inserted it first.
      key = await keys.getByHash(hash);
      if (!key) throw err;
    }
  }
  await grantStartingCreditsOnce(db, key.accountId, startingCredits);
}
