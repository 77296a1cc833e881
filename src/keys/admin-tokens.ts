// The admin API's bearer token: AGENT_API_ADMIN_TOKEN when set, else the token a first
// start generated or `agent-api admin-token rotate` made, of which only the sha256 is
// stored. The stored hash is re-read after AGENT_API_KEY_CACHE_MS, as keys are, so a
// rotation by another process (the CLI) reaches a running server within that time.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { newSecret } from '../ids.ts';
import type { Database } from '../store/schema.ts';

export type AdminTokenSource = 'env' | 'stored' | 'none';

const ROW = 'admin';
const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

/** A new admin token: 32 random bytes, base64url, with a prefix that says what it is. */
export const newAdminToken = (): string => newSecret('agent-admin-');

export class AdminTokens {
  private readonly envDigest: Buffer | null;
  private cached: { digest: Buffer | null; until: number } | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    envToken: string | undefined,
    private readonly cacheMs: number,
  ) {
    this.envDigest = envToken ? sha256(envToken) : null;
  }

  /** Where the token in force comes from; `none`: the admin API is off. */
  async source(): Promise<AdminTokenSource> {
    if (this.envDigest) return 'env';
    return (await this.expected(Date.now())) ? 'stored' : 'none';
  }

  /** `off` when no token is configured or stored. */
  async verify(secret: string | null, now = Date.now()): Promise<'ok' | 'wrong' | 'off'> {
    const expected = await this.expected(now);
    if (!expected) return 'off';
    // Compare digests so the comparison takes the same time whatever the input length.
    return secret !== null && timingSafeEqual(sha256(secret), expected) ? 'ok' : 'wrong';
  }

  /** Drops the cached hash (after this process stored a new one). */
  forget(): void {
    this.cached = undefined;
  }

  private async expected(now: number): Promise<Buffer | null> {
    if (this.envDigest) return this.envDigest;
    if (this.cached && this.cached.until > now) return this.cached.digest;
    const row = await this.db.selectFrom('admin_tokens').select('token_hash').where('id', '=', ROW).executeTakeFirst();
    const digest = row ? Buffer.from(row.token_hash, 'hex') : null;
    if (this.cacheMs > 0) this.cached = { digest, until: now + this.cacheMs };
    return digest;
  }
}

/**
 * Stores the hash of `token`. With `replace` false it stores only when none is stored yet
 * and says whether it did (two instances starting at once: one wins).
 */
export async function storeAdminToken(db: Kysely<Database>, token: string, { replace }: { replace: boolean }): Promise<boolean> {
  const row = { id: ROW, token_hash: sha256(token).toString('hex'), created_at: Date.now() };
  const result = await db
    .insertInto('admin_tokens')
    .values(row)
    .onConflict((oc) => (replace ? oc.column('id').doUpdateSet({ token_hash: row.token_hash, created_at: row.created_at }) : oc.column('id').doNothing()))
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Deletes the stored token (the admin API is then off unless AGENT_API_ADMIN_TOKEN is set). */
export async function removeAdminToken(db: Kysely<Database>): Promise<boolean> {
  const result = await db.deleteFrom('admin_tokens').where('id', '=', ROW).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function hasStoredAdminToken(db: Kysely<Database>): Promise<boolean> {
  return (await db.selectFrom('admin_tokens').select('id').where('id', '=', ROW).executeTakeFirst()) !== undefined;
}
