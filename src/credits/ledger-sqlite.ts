// The ledger's per-call statements on SQLite: prepared statements, run synchronously
// inside group-commit transactions (store/group-commit.ts), so the reservations and
// settlements of one event-loop turn share a commit.
import type SQLite from 'better-sqlite3';
import type { Store } from '../store/db.ts';
import type { CallFacts, ChargedFor, LedgerStatements, Reservation } from './ledger.ts';

export function sqliteStatements(write: NonNullable<Store['sqliteWrite']>, instanceId: string, leaseMs: number): LedgerStatements {
  let prepared:
    | {
        reserve: (r: Reservation, keyId: string | null, call: CallFacts | null, now: number) => boolean;
        settle: (r: Reservation, charge: number, usage: ChargedFor | null, now: number) => boolean;
      }
    | undefined;
  const statements = (conn: SQLite.Database) => {
    if (prepared) return prepared;
    const take = conn.prepare('update accounts set reserved = reserved + ? where id = ? and balance - reserved >= ?');
    const hold = conn.prepare(
      'insert into credit_holds (run_id, request_id, account_id, key_id, amount, created_at, instance_id, lease_until, endpoint, model) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const unhold = conn.prepare('delete from credit_holds where run_id = ? returning request_id, account_id, key_id, amount, created_at, instance_id, endpoint, model');
    const entry = conn.prepare(
      `insert into credit_reservations (run_id, request_id, account_id, key_id, amount, status, charged, created_at, settled_at, instance_id, endpoint, model, input_tokens, output_tokens, cost_usd)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const release = conn.prepare('update accounts set reserved = reserved - ?, balance = balance - ? where id = ?');
    prepared = {
      reserve: (r, keyId, call, now) => {
        if (take.run(r.amount, r.accountId, r.amount).changes !== 1) return false;
        hold.run(r.runId, r.requestId, r.accountId, keyId, r.amount, now, instanceId, now + leaseMs, call?.endpoint ?? null, call?.model ?? null);
        return true;
      },
      settle: (r, charge, usage, now) => {
        const held = unhold.get(r.runId) as
          | { request_id: string; account_id: string; key_id: string | null; amount: number; created_at: number; instance_id: string | null; endpoint: string | null; model: string | null }
          | undefined;
        if (!held) return false;
        entry.run(
          r.runId,
          held.request_id,
          held.account_id,
          held.key_id,
          held.amount,
          charge > 0 ? 'settled' : 'released',
          charge,
          held.created_at,
          now,
          held.instance_id,
          held.endpoint,
          held.model,
          usage?.inputTokens ?? 0,
          usage?.outputTokens ?? 0,
          usage?.costUsd ?? 0,
        );
        release.run(held.amount, charge, held.account_id);
        return true;
      },
    };
    return prepared;
  };
  // Each runs inside a group-commit transaction: a throw rolls back its own writes.
  return {
    ordered: true,
    reserve: (r, keyId, call, now) => write((conn) => statements(conn).reserve(r, keyId, call, now)),
    settle: (r, charge, usage, now) => write((conn) => statements(conn).settle(r, charge, usage, now)),
  };
}
