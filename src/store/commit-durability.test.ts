// Which commits wait for a disk flush (issue 25: one synchronous commit on a call's
// path). On PostgreSQL: the credit reservation's does; a settlement's (ledger_settle,
// migration 0027) and the stored objects' (Store.relaxed) do not, and what they wrote
// is read at once by every other session. On SQLite nothing changes: relaxed is db.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { scratchDatabase } from '../../test/helpers/test-server.ts';
import type { Config } from '../config.ts';
import { openStore } from './db.ts';

const setting = async (db: Kysely<any>) =>
  (await sql<{ s: string }>`select current_setting('synchronous_commit') as s`.execute(db)).rows[0]!.s;

test('PostgreSQL: reservations commit synchronously; settlements and stored objects without waiting for the flush, seen at once', async () => {
  const scratch = await scratchDatabase();
  const database: Config['database'] = scratch.url.startsWith('sqlite:') ? { kind: 'sqlite', file: scratch.url.slice('sqlite:'.length) } : { kind: 'postgres', url: scratch.url };
  const store = await openStore(database);
  try {
    if (store.kind === 'sqlite') {
      assert.equal(store.relaxed, store.db, 'SQLite: one connection, as before');
      return;
    }
    // The test cluster itself may run with synchronous_commit off: what matters is who sets it.
    const source = async (db: Kysely<any>) => (await sql<{ s: string }>`select source as s from pg_settings where name = 'synchronous_commit'`.execute(db)).rows[0]!.s;
    assert.notEqual(await source(store.db), 'client', "the main pool keeps the server's setting");
    assert.equal(await source(store.relaxed), 'client');
    assert.equal(await setting(store.relaxed), 'off', "stored objects' commits do not wait for the flush");
    // What each function leaves in force when its transaction commits, on a server that commits synchronously.
    const inTransaction = (call: string) =>
      store.db.transaction().execute(async (trx) => {
        await sql`set local synchronous_commit = on`.execute(trx);
        await sql.raw(call).execute(trx);
        return setting(trx);
      });
    assert.equal(await inTransaction('select ledger_settle(array[]::text[], array[]::bigint[], 0, array[]::bigint[], array[]::bigint[], array[]::bigint[])'), 'off', 'a settlement commits asynchronously');
    assert.equal(
      await inTransaction("select ledger_reserve(array[]::text[], array[]::text[], array[]::text[], array[]::text[], array[]::bigint[], 0, 'i', 0, array[]::text[], array[]::text[])"),
      'on',
      'a reservation commits synchronously',
    );
    // Committed asynchronously is committed: another session reads it at once.
    await store.relaxed.insertInto('meta').values({ key: 'relaxed-probe', value: 'x' }).execute();
    assert.equal((await store.db.selectFrom('meta').select('value').where('key', '=', 'relaxed-probe').executeTakeFirst())?.value, 'x');
  } finally {
    await store.close();
    await scratch.cleanup();
  }
});
