// Open reservations move out of the ledger into a table of their own. A hold is written
// before every model call and deleted when it settles; the ledger entry is written once,
// settled. The reservation in the request's path then touches two small pages (the
// account, the hold) instead of the entry, its key index and an index of open entries,
// and the stale-hold sweep reads a table of in-flight calls, not every entry ever.
import { SqliteAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema
    .createTable('credit_holds')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key_id', 'text')
    /** micro-credits held */
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // SQLite: the rows live in the key's b-tree, one page per write instead of two.
    .$call((b) => (sqlite ? b.modifyEnd(sql`without rowid`) : b))
    .execute();
  await sql`insert into credit_holds (request_id, account_id, key_id, amount, created_at)
    select request_id, account_id, key_id, amount, created_at from credit_reservations where status = 'open'`.execute(db);
  await sql`delete from credit_reservations where status = 'open'`.execute(db);
  await db.schema.dropIndex('credit_reservations_open').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`insert into credit_reservations (request_id, account_id, key_id, amount, status, charged, created_at, settled_at)
    select request_id, account_id, key_id, amount, 'open', 0, created_at, null from credit_holds`.execute(db);
  await db.schema.createIndex('credit_reservations_open').on('credit_reservations').column('created_at').where(sql.ref('status'), '=', 'open').execute();
  await db.schema.dropTable('credit_holds').execute();
}
