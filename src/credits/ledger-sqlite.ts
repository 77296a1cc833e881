// The ledger's per-call statements on SQLite: prepared statements, run synchronously
// inside group-commit transactions (store/group-commit.ts), so the reservations and
// settlements of one event-loop turn share a commit.
import type SQLite from 'better-sqlite3';
import type { Store } from '../store/db.ts';
import type { LedgerStatements, Reservation } from './ledger.ts';

export function sqliteStatements(write: NonNullable<Store['sqliteWrite']>, instanceId: string, leaseMs: number): LedgerStatements {
  let prepared: { reserve: (r: Reservation, keyId: string | null, now: number) => boolean; settle: (r: Reservation, charge: number, now: number) => boolean } | undefined;
  const statements = (conn: SQLite.Database) => {
    if (prepared) return prepared;
    const take = conn.prepare('update accounts set reserved = reserved + ? where id = ? and balance - reserved >= ?');
    const hold = conn.prepare('insert into credit_holds (request_id, account_id, key_id, amount, created_at, instance_id, lease_until) values (?, ?, ?, ?, ?, ?, ?)');
    const unhold = conn.prepare('delete from credit_holds where request_id = ? returning account_id, key_id, amount, created_at');
    const entry = conn.prepare(
      'insert into credit_reservations (request_id, account_id, key_id, amount, status, charged, created_at, settled_at) values (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const release = conn.prepare('update accounts set reserved = reserved - ?, balance = balance - ? where id = ?');
    prepared = {
      reserve: (r, keyId, now) => {
        if (take.run(r.amount, r.accountId, r.amount).changes !== 1) return false;
        hold.run(r.requestId, r.accountId, keyId, r.amount, now, instanceId, now + leaseMs);
        return true;
      },
      settle: (r, charge, now) => {
        const held = unhold.get(r.requestId) as { account_id: string; key_id: string | null; amount: number; created_at: number } | undefined;
        if (!held) return false;
        entry.run(r.requestId, held.account_id, held.key_id, held.amount, charge > 0 ? 'settled' : 'released', charge, held.created_at, now);
        release.run(held.amount, charge, held.account_id);
        return true;
      },
    };
    return prepared;
  };
  // Each runs inside a group-commit transaction: a throw rolls back its own writes.
  return {
    ordered: true,
    reserve: (r, keyId, now) => write((conn) => statements(conn).reserve(r, keyId, now)),
    settle: (r, charge, now) => write((conn) => statements(conn).settle(r, charge, now)),
  };
}
