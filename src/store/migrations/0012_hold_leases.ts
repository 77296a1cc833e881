// A credit hold carries a lease its instance renews while the run lives: holds whose
// lease ran out (their instance died) are released within a lease period by any
// instance's sweep, instead of after an hour (issue 9).
import { SqliteAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('credit_holds').addColumn('lease_until', 'bigint').execute();
  await db.schema.createIndex('credit_holds_lease').on('credit_holds').column('lease_until').execute();
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`drop function if exists ledger_reserve(text[], text[], text[], bigint[], bigint, text)`.execute(db);
  // As in 0008, with the lease written on each hold.
  await sql`
    create or replace function ledger_reserve(p_request_ids text[], p_account_ids text[], p_key_ids text[], p_amounts bigint[], p_at bigint, p_instance text, p_lease_until bigint)
    returns setof text language plpgsql as $$
    declare
      r record;
    begin
      for r in
        select t.request_id, t.account_id, t.key_id, t.amount
        from unnest(p_request_ids, p_account_ids, p_key_ids, p_amounts) with ordinality as t(request_id, account_id, key_id, amount, n)
        order by t.account_id, t.n
      loop
        update accounts set reserved = reserved + r.amount where id = r.account_id and balance - reserved >= r.amount;
        if found then
          insert into credit_holds (request_id, account_id, key_id, amount, created_at, instance_id, lease_until)
            values (r.request_id, r.account_id, r.key_id, r.amount, p_at, p_instance, p_lease_until);
          return next r.request_id;
        end if;
      end loop;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql`drop function if exists ledger_reserve(text[], text[], text[], bigint[], bigint, text, bigint)`.execute(db);
  }
  await db.schema.dropIndex('credit_holds_lease').execute();
  await db.schema.alterTable('credit_holds').dropColumn('lease_until').execute();
}
