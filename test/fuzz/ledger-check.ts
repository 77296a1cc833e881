// Reads the database of the server under test before and after the run: no row written
// and nothing charged for a refused request, no hold left, and every account's books
// balance (balance = grants - charges; A's and B's grants are the set-up's alone).
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Database } from '../../src/store/schema.ts';

/** The database, opened on first use and closed (if it was) at the end. */
export function lazyDatabase(url: string): { open(): Kysely<Database>; close(): Promise<void> } {
  let db: Kysely<Database> | undefined;
  return { open: () => (db ??= openDatabase(url)), close: async () => db?.destroy() };
}

function openDatabase(url: string): Kysely<Database> {
  if (url.startsWith('sqlite:')) {
    return new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(url.slice('sqlite:'.length), { readonly: true, fileMustExist: true }) }) });
  }
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }) });
}

export interface Snapshot {
  accounts: Set<string>;
  keys: Set<string>;
  completions: Set<string>;
  files: Set<string>;
  grants: Set<string>;
  charges: Set<string>;
}

export async function snapshot(db: Kysely<Database>): Promise<Snapshot> {
  const set = (rows: { id: string }[]) => new Set(rows.map((r) => r.id));
  return {
    accounts: set(await db.selectFrom('accounts').select('id').execute()),
    keys: set(await db.selectFrom('api_keys').select('id').execute()),
    completions: set(await db.selectFrom('chat_completions').select('id').execute()),
    files: set(await db.selectFrom('files').select('id').execute()),
    grants: set(await db.selectFrom('credit_transactions').select('id').execute()),
    charges: set(await db.selectFrom('credit_reservations').select('request_id as id').execute()),
  };
}

export interface LedgerFindings {
  /** rows added for requests that were refused, or that no 2xx answer names */
  rowsLeaked: string[];
  /** ledger entries with a charge for a request that was not answered 2xx */
  creditsLeaked: string[];
  /**
   * Charges for requests that got no answer and left no activity row: in flight when a
   * hung server was killed. Not a refusal (the hang is the failure); listed, and counted
   * as charged in the balance check.
   */
  chargedAtKill: string[];
  holdsLeft: string[];
  booksUnbalanced: string[];
  /** micro-credits charged per account for 2xx requests (and requests in flight at a kill) */
  charged: Record<string, number>;
}

export interface RunFacts {
  before: Snapshot;
  /** X-Request-Id of every 2xx answer */
  ok: Set<string>;
  /** X-Request-Id of every 4xx answer */
  refused: Set<string>;
  /**
   * X-Request-Id of the gateway's answers that are its upstream's refusal: the credits
   * were held before the request was forwarded, so a released entry (nothing charged) is
   * their ledger's due; a charge is still a leak.
   */
  upstreamRefused?: Set<string>;
  /** every id a 2xx answer named */
  named: Set<string>;
  /** accounts whose grants all happened in set-up (A and B) */
  fixedAccounts: string[];
  /** 2xx answers of admin requests that may grant credits (POST) */
  adminPosts: number;
  /** The blob store's directory: every blob must belong to a file row, and no temp file may be left. */
  blobDir?: string;
  /**
   * The key of the Responses WebSocket messages, and how many of them ran to a last
   * response event: its charges are told apart by their activity row (status < 400:
   * a message that ran), and there may be no more of those than messages that ran.
   */
  websocket?: { keyId: string; ran: number };
}

export async function checkLedger(db: Kysely<Database>, facts: RunFacts): Promise<LedgerFindings> {
  const f: LedgerFindings = { rowsLeaked: [], creditsLeaked: [], chargedAtKill: [], holdsLeft: [], booksUnbalanced: [], charged: {} };
  const after = await snapshot(db);
  const added = (before: Set<string>, now: Set<string>) => [...now].filter((id) => !before.has(id));

  for (const [table, before, now] of [
    ['accounts', facts.before.accounts, after.accounts],
    ['api_keys', facts.before.keys, after.keys],
    ['chat_completions', facts.before.completions, after.completions],
    ['files', facts.before.files, after.files],
  ] as const) {
    for (const id of added(before, now)) if (!facts.named.has(id)) f.rowsLeaked.push(`${table} ${id}: no 2xx answer names it`);
  }
  if (facts.blobDir) f.rowsLeaked.push(...(await blobsLeaked(db, facts.blobDir)));

  const newCharges = added(facts.before.charges, after.charges);
  if (newCharges.length) {
    const rows = await db.selectFrom('credit_reservations').selectAll().where('request_id', 'in', newCharges).execute();
    let ranOverWebSocket = 0;
    for (const r of rows) {
      if (facts.ok.has(r.request_id)) {
        f.charged[r.account_id] = (f.charged[r.account_id] ?? 0) + r.charged;
        continue;
      }
      if (r.charged === 0 && r.status === 'released' && facts.upstreamRefused?.has(r.request_id)) continue;
      const activity = await db.selectFrom('activity').select(['method', 'endpoint', 'status', 'error_code']).where('request_id', '=', r.request_id).executeTakeFirst();
      // Its client went away before the answer (a case that broke its own connection, and saw the parser's answer to
      // the rest of its bytes instead): a hold released with nothing charged is what that leaves.
      if (r.charged === 0 && r.status === 'released' && activity?.status === 499 && !facts.refused.has(r.request_id)) continue;
      if (facts.websocket && r.key_id === facts.websocket.keyId && activity && activity.status < 400 && !facts.refused.has(r.request_id)) {
        ranOverWebSocket++;
        f.charged[r.account_id] = (f.charged[r.account_id] ?? 0) + r.charged;
        continue;
      }
      if (!activity && !facts.refused.has(r.request_id)) {
        f.charged[r.account_id] = (f.charged[r.account_id] ?? 0) + r.charged;
        f.chargedAtKill.push(`${r.request_id}: charged ${r.charged} micro-credits`);
        continue;
      }
      const logged = activity ? `; activity log: ${activity.method} ${activity.endpoint} ${activity.status}${activity.error_code ? ` ${activity.error_code}` : ''}` : '';
      const why = `${facts.refused.has(r.request_id) ? 'answered 4xx' : 'no answer seen'}${logged}`;
      if (r.charged > 0) f.creditsLeaked.push(`${r.request_id} (${why}): charged ${r.charged} micro-credits`);
      else f.rowsLeaked.push(`credit_reservations ${r.request_id} (${why}): a ledger entry with no charge`);
    }
    if (facts.websocket && ranOverWebSocket > facts.websocket.ran) {
      f.creditsLeaked.push(`${ranOverWebSocket} charges logged as run on the WebSocket key, but only ${facts.websocket.ran} messages ran to a last response event`);
    }
  }

  const newGrants = added(facts.before.grants, after.grants);
  if (newGrants.length) {
    const rows = await db.selectFrom('credit_transactions').selectAll().where('id', 'in', newGrants).execute();
    for (const r of rows) if (facts.fixedAccounts.includes(r.account_id)) f.rowsLeaked.push(`credit_transactions ${r.id}: a grant of ${r.amount} to ${r.account_id} during the run`);
    if (rows.length > facts.adminPosts) f.rowsLeaked.push(`credit_transactions: ${rows.length} grants during the run, but only ${facts.adminPosts} admin POSTs answered 2xx`);
  }

  for (const h of await db.selectFrom('credit_holds').selectAll().execute()) f.holdsLeft.push(`${h.request_id}: ${h.amount} micro-credits held for ${h.account_id}`);

  const grants = await db.selectFrom('credit_transactions').select(['account_id', (eb) => eb.fn.sum<number>('amount').as('total')]).groupBy('account_id').execute();
  const charges = await db.selectFrom('credit_reservations').select(['account_id', (eb) => eb.fn.sum<number>('charged').as('total')]).groupBy('account_id').execute();
  const sum = (rows: { account_id: string; total: number | string | null }[], id: string) => Number(rows.find((r) => r.account_id === id)?.total ?? 0);
  for (const a of await db.selectFrom('accounts').selectAll().execute()) {
    const expected = sum(grants, a.id) - sum(charges, a.id);
    if (Number(a.balance) !== expected) f.booksUnbalanced.push(`${a.id}: balance ${a.balance}, grants - charges = ${expected}`);
    if (Number(a.reserved) !== 0) f.booksUnbalanced.push(`${a.id}: ${a.reserved} micro-credits still reserved`);
  }
  return f;
}

/** Blobs no row names (a refused upload's), temp files left behind, file rows without their blob. */
async function blobsLeaked(db: Kysely<Database>, dir: string): Promise<string[]> {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  const rows = await db.selectFrom('files').select(['id', 'blob_key']).execute();
  const keys = new Set(rows.map((r) => r.blob_key));
  // Container files and skill versions keep blobs too.
  for (const r of await db.selectFrom('container_files').select('blob_key').execute()) if (r.blob_key) keys.add(r.blob_key);
  for (const r of await db.selectFrom('skill_versions').select('manifest').execute()) for (const f of JSON.parse(r.manifest) as { blob_key: string }[]) keys.add(f.blob_key);
  const onDisk = new Set<string>();
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const rel = path.relative(dir, path.join(e.parentPath, e.name));
    if (rel.startsWith('.tmp')) out.push(`blob temp file ${rel}: left behind`);
    else if (!keys.has(e.name)) out.push(`blob ${rel}: no file row names it`);
    else onDisk.add(e.name);
  }
  for (const r of rows) if (!onDisk.has(r.blob_key)) out.push(`files ${r.id}: its blob ${r.blob_key} is missing`);
  return out;
}
