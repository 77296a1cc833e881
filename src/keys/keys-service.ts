// API keys: created with a secret shown once, stored as a sha256 hash (the secret is
// high-entropy random, so a fast hash is enough and allows an indexed lookup).
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { LocalSignals, type Signals } from '../cluster/signals.ts';
import { newId, newSecret } from '../ids.ts';
import type { Database } from '../store/schema.ts';
import { parseAllowEntry, type Range } from './ip-allowlist.ts';
import type { KeyLimit } from './key-limits.ts';
import { noPermissions, PERMISSIONS, type PermissionSet } from './permissions.ts';

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** A key as the pipeline uses it. */
export interface KeyRecord {
  id: string;
  accountId: string;
  name: string;
  hint: string;
  permissions: PermissionSet;
  /** null: every chat model */
  models: string[] | null;
  ipAllowlist: string[] | null;
  ipRanges: Range[] | null;
  rpm: number | null;
  /** Caps every request's output (max_tokens), the service default included; null: no cap of its own. */
  maxOutputTokens: number | null;
  limits: KeyLimit[];
  paused: boolean;
  revokedAt: number | null;
  expiresAt: number | null;
  createdAt: number;
  lastUsedAt: number | null;
}

export interface KeyInput {
  account_id: string;
  name: string;
  permissions?: Partial<PermissionSet>;
  models?: string[] | null;
  ip_allowlist?: string[] | null;
  rpm?: number | null;
  max_output_tokens?: number | null;
  limits?: KeyLimit[];
  paused?: boolean;
  /** Unix seconds */
  expires_at?: number | null;
}

export type KeyPatch = Partial<Omit<KeyInput, 'account_id'>>;

type KeyRow = Database['api_keys'];

function hintOf(secret: string): string {
  return `${secret.slice(0, 13)}...${secret.slice(-4)}`;
}

function mergePermissions(base: PermissionSet, patch: Partial<PermissionSet> | undefined): PermissionSet {
  const out = { ...base };
  for (const p of PERMISSIONS) if (patch && typeof patch[p] === 'boolean') out[p] = patch[p];
  return out;
}

export function toRecord(row: KeyRow): KeyRecord {
  const ipAllowlist = row.ip_allowlist ? (JSON.parse(row.ip_allowlist) as string[]) : null;
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    hint: row.key_hint,
    permissions: mergePermissions(noPermissions(), JSON.parse(row.permissions) as Partial<PermissionSet>),
    models: row.models ? (JSON.parse(row.models) as string[]) : null,
    ipAllowlist,
    ipRanges: ipAllowlist ? ipAllowlist.map(parseAllowEntry) : null,
    rpm: row.rpm,
    maxOutputTokens: row.max_output_tokens ?? null,
    limits: JSON.parse(row.limits) as KeyLimit[],
    paused: row.paused === 1,
    revokedAt: row.revoked_at,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** The admin API's view of a key: never the secret or its hash. */
export function viewKey(k: KeyRecord) {
  const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));
  return {
    id: k.id,
    object: 'api_key' as const,
    account_id: k.accountId,
    name: k.name,
    redacted_value: k.hint,
    permissions: k.permissions,
    models: k.models,
    ip_allowlist: k.ipAllowlist,
    rpm: k.rpm,
    max_output_tokens: k.maxOutputTokens,
    limits: k.limits,
    paused: k.paused,
    revoked: k.revokedAt !== null,
    revoked_at: seconds(k.revokedAt),
    expires_at: seconds(k.expiresAt),
    created_at: seconds(k.createdAt)!,
    last_used_at: seconds(k.lastUsedAt),
  };
}

export class KeysService {
  private readonly cache = new Map<string, { record: KeyRecord | null; until: number }>();
  /** Moves on every drop: a lookup that a change overtook does not cache what it read. */
  private epoch = 0;

  /**
   * A change to a key is a signal (`key.changed`): every instance's cache drops the key
   * at once (over Redis when several share the database). Signals missed while Redis
   * was unreachable: the whole cache goes when it is back; until then entries expire.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly cacheMs: number,
    private readonly signals: Signals = new LocalSignals(),
  ) {
    signals.subscribe('key.changed', (id) => this.forget(id));
    signals.onResync(() => {
      this.epoch++;
      this.cache.clear();
    });
  }

  /** Creates a key; the returned secret is the only time it exists outside the caller. */
  async create(input: KeyInput, secret = newSecret()): Promise<{ record: KeyRecord; secret: string }> {
    const row: KeyRow = {
      id: newId('key_'),
      account_id: input.account_id,
      name: input.name,
      key_hash: hashSecret(secret),
      key_hint: hintOf(secret),
      permissions: JSON.stringify(mergePermissions(noPermissions(), input.permissions)),
      models: input.models ? JSON.stringify(input.models) : null,
      ip_allowlist: input.ip_allowlist ? JSON.stringify(input.ip_allowlist) : null,
      rpm: input.rpm ?? null,
      max_output_tokens: input.max_output_tokens ?? null,
      limits: JSON.stringify(input.limits ?? []),
      paused: input.paused ? 1 : 0,
      revoked_at: null,
      expires_at: input.expires_at ? input.expires_at * 1000 : null,
      created_at: Date.now(),
      last_used_at: null,
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return { record: toRecord(row), secret };
  }

  async get(id: string): Promise<KeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  async getByHash(hash: string): Promise<KeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
    return row && toRecord(row);
  }

  async list(filter: { accountId?: string } = {}): Promise<KeyRecord[]> {
    let q = this.db.selectFrom('api_keys').selectAll().orderBy('id');
    if (filter.accountId) q = q.where('account_id', '=', filter.accountId);
    return (await q.execute()).map(toRecord);
  }

  async update(id: string, patch: KeyPatch): Promise<KeyRecord | undefined> {
    const current = await this.get(id);
    if (!current) return undefined;
    const set: Partial<KeyRow> = {};
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.permissions !== undefined) set.permissions = JSON.stringify(mergePermissions(current.permissions, patch.permissions));
    if (patch.models !== undefined) set.models = patch.models ? JSON.stringify(patch.models) : null;
    if (patch.ip_allowlist !== undefined) set.ip_allowlist = patch.ip_allowlist ? JSON.stringify(patch.ip_allowlist) : null;
    if (patch.rpm !== undefined) set.rpm = patch.rpm;
    if (patch.max_output_tokens !== undefined) set.max_output_tokens = patch.max_output_tokens;
    if (patch.limits !== undefined) set.limits = JSON.stringify(patch.limits);
    if (patch.paused !== undefined) set.paused = patch.paused ? 1 : 0;
    if (patch.expires_at !== undefined) set.expires_at = patch.expires_at === null ? null : patch.expires_at * 1000;
    if (Object.keys(set).length > 0) await this.db.updateTable('api_keys').set(set).where('id', '=', id).execute();
    await this.signals.publish('key.changed', id);
    return this.get(id);
  }

  async revoke(id: string): Promise<KeyRecord | undefined> {
    const revoked = await this.db.updateTable('api_keys').set({ revoked_at: Date.now() }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
    if (Number(revoked.numUpdatedRows) > 0) await this.signals.publish('key.changed', id);
    return this.get(id);
  }

  /**
   * The key for a presented secret, from a short cache (AGENT_API_KEY_CACHE_MS) so the
   * hot path does not hit the database on every request. Changes made through any
   * instance that signals (the admin API, the CLI with REDIS_URL) drop the key at once;
   * a change that sends no signal applies within the TTL.
   */
  async authenticate(secret: string, now = Date.now()): Promise<KeyRecord | null> {
    const hash = hashSecret(secret);
    const hit = this.cache.get(hash);
    if (hit && hit.until > now) return hit.record;
    const epoch = this.epoch;
    const record = (await this.getByHash(hash)) ?? null;
    if (this.cacheMs > 0 && epoch === this.epoch) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, { record, until: now + this.cacheMs });
    }
    return record;
  }

  /** Drops the cached entries of a key (any secret that maps to it). */
  private forget(keyId: string): void {
    this.epoch++;
    for (const [hash, entry] of this.cache) if (entry.record?.id === keyId) this.cache.delete(hash);
  }

  /** Records use without slowing the request: at most one write per key per minute. */
  touch(record: KeyRecord, now = Date.now()): void {
    if (record.lastUsedAt !== null && now - record.lastUsedAt < 60_000) return;
    record.lastUsedAt = now;
    void this.db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', record.id).execute().catch(() => undefined);
  }
}
