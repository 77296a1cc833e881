// The migration set on the engine the run selected: migration 0005 moves open
// reservations out of the ledger into credit_holds and keeps settled entries; 0021 keys
// both by run, each old row its call's first run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { scratchDatabase } from '../../../test/helpers/test-server.ts';
import type { Config } from '../../config.ts';
import { Ledger } from '../../credits/ledger.ts';
import { openStore } from '../db.ts';
import { migrationProvider } from './index.ts';

test('0005 moves open reservations into credit_holds and keeps settled entries, 0021 makes each its call\'s first run; the ledger releases them', async () => {
  const scratch = await scratchDatabase();
  try {
    const database: Config['database'] = scratch.url.startsWith('sqlite:') ? { kind: 'sqlite', file: scratch.url.slice('sqlite:'.length) } : { kind: 'postgres', url: scratch.url };
    const old = new Kysely<any>({
      dialect: database.kind === 'sqlite' ? new SqliteDialect({ database: new SQLite(database.file) }) : new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url }) }),
    });
    const to0004 = await new Migrator({ db: old, provider: migrationProvider }).migrateTo('0004_drop_reservation_account_index');
    assert.equal(to0004.error, undefined);
    await old.insertInto('accounts').values({ id: 'acct_m', name: 'm', balance: 5_000_000, reserved: 1_500_000, created_at: 1 }).execute();
    await old
      .insertInto('credit_reservations')
      .values([
        { request_id: 'req_open', account_id: 'acct_m', key_id: 'key_1', amount: 1_500_000, status: 'open', charged: 0, created_at: 10, settled_at: null },
        { request_id: 'req_done', account_id: 'acct_m', key_id: 'key_1', amount: 900_000, status: 'settled', charged: 400_000, created_at: 5, settled_at: 6 },
      ])
      .execute();
    await old.destroy();

    const store = await openStore(database);
    try {
      const holds = await store.db.selectFrom('credit_holds').selectAll().execute();
      assert.deepEqual(holds, [{ run_id: 'req_open', request_id: 'req_open', account_id: 'acct_m', key_id: 'key_1', amount: 1_500_000, created_at: 10, instance_id: null, lease_until: null, endpoint: null, model: null }]);
      const entries = await store.db.selectFrom('credit_reservations').select(['run_id', 'request_id', 'status', 'charged']).execute();
      assert.deepEqual(entries, [{ run_id: 'req_done', request_id: 'req_done', status: 'settled', charged: 400_000 }]);

      // The moved hold is an ordinary stale hold to the ledger now.
      const ledger = new Ledger(store, { error: () => undefined });
      assert.equal(await ledger.releaseStale(60_000), 1);
      const account = await store.db.selectFrom('accounts').selectAll().where('id', '=', 'acct_m').executeTakeFirstOrThrow();
      assert.equal(account.reserved, 0);
      assert.equal(account.balance, 5_000_000);
    } finally {
      await store.close();
    }
  } finally {
    await scratch.cleanup();
  }
});
