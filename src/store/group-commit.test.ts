// The SQLite hot-write path: group commit (writes of one turn share a transaction, a
// failing write fails alone, a queued write precedes every later statement whichever
// event-loop phase queued it) and WAL checkpoints on a worker thread.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { openStore, type Store } from './db.ts';

let dir: string;
let store: Store;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-group-commit-'));
  store = await openStore({ kind: 'sqlite', file: path.join(dir, 'db.sqlite') }, { walCheckpointMs: 20 });
  await sql`create table t (id integer primary key, v text not null)`.execute(store.db);
});
after(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const write = (id: number, v: string | null) => store.sqliteWrite!((conn) => conn.prepare('insert into t (id, v) values (?, ?)').run(id, v).changes);
const count = async () => Number((await sql<{ n: number }>`select count(*) as n from t`.execute(store.db)).rows[0]!.n);

test('writes queued in one turn share one transaction and each gets its own result', async () => {
  // Every statement of one transaction sees the same data_version from another connection's
  // point of view; simpler to observe: the batch commits as one, so a reader between two
  // writes of the same turn cannot exist. Check the results and that all landed.
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => write(1000 + i, 'x')));
  assert.deepEqual(results, Array(20).fill(1));
  assert.equal(await count(), 20);
});

test('a failing write fails alone; the others of its batch are kept', async () => {
  const outcomes = await Promise.allSettled([write(1, 'a'), write(2, null), write(3, 'c')]);
  assert.equal(outcomes[0].status, 'fulfilled');
  assert.equal(outcomes[1].status, 'rejected', 'v is NOT NULL');
  assert.equal(outcomes[2].status, 'fulfilled');
  const ids = (await sql<{ id: number }>`select id from t where id < 10 order by id`.execute(store.db)).rows.map((r) => r.id);
  assert.deepEqual(ids, [1, 3]);
});

test('a write queued and not awaited is seen by the next statement, even one issued from a setImmediate callback', async () => {
  // Queued during the check phase, the batch's own flush would only run a turn later:
  // the next statement must commit it first.
  const seen = await new Promise<number>((resolve, reject) => {
    setImmediate(() => {
      void write(50, 'late');
      sql<{ n: number }>`select count(*) as n from t where id = 50`
        .execute(store.db)
        .then((r) => resolve(Number(r.rows[0]!.n)), reject);
    });
  });
  assert.equal(seen, 1);
});

test('close() commits what is still queued', async () => {
  const file = path.join(dir, 'close.sqlite');
  const s = await openStore({ kind: 'sqlite', file }, { walCheckpointMs: 20 });
  await sql`create table t (id integer primary key)`.execute(s.db);
  void s.sqliteWrite!((conn) => conn.prepare('insert into t (id) values (7)').run());
  await s.close();
  const again = await openStore({ kind: 'sqlite', file });
  assert.equal(Number((await sql<{ n: number }>`select count(*) as n from t`.execute(again.db)).rows[0]!.n), 1);
  await again.close();
});

test('the WAL is checkpointed by the worker thread, not by the server connection', async () => {
  const threshold = await store.sqliteSync!((conn) => conn.pragma('wal_autocheckpoint', { simple: true }) as number);
  assert.ok(threshold >= 10_000, `the server connection checkpoints only as a safety net (${threshold} pages)`);
  const file = path.join(dir, 'db.sqlite');
  const sizeBefore = fs.statSync(file).size;
  await Promise.all(Array.from({ length: 2000 }, (_, i) => write(10_000 + i, 'y'.repeat(200))));
  // New pages live in the WAL until a checkpoint copies them into the database file; far
  // below the server connection's threshold, only the worker does that.
  let size = sizeBefore;
  for (let i = 0; i < 200 && size < sizeBefore + 300_000; i++) {
    await new Promise((r) => setTimeout(r, 10));
    size = fs.statSync(file).size;
  }
  assert.ok(size >= sizeBefore + 300_000, `the database file grew from ${sizeBefore} to ${size} bytes`);
});
