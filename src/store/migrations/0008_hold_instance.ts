// A credit hold names the instance that took it, so an instance that restarts after a
// crash releases its previous holds at once instead of leaving the account's credits
// locked until the stale-hold sweep (issue 8; leases generalize it later).
import { SqliteAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('credit_holds').addColumn('instance_id', 'text').execute();
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`drop function if exists ledger_reserve(text[], text[], text[], bigint[], bigint)`.execute(db);
  // As in 0006, with the instance written on each hold.
  await sql`
    create or replace function ledger_reserve(p_request_ids text[], p_account_ids text[], p_key_ids text[], p_amounts bigint[], p_at bigint, p_instance text)
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
          insert into credit_holds (request_id, account_id, key_id, amount, created_at, instance_id) values (r.request_id, r.account_id, r.key_id, r.amount, p_at, p_instance);
          return next r.request_id;
        end if;
      end loop;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql`drop function if exists ledger_reserve(text[], text[], text[], bigint[], bigint, text)`.execute(db);
  }
  await db.schema.alterTable('credit_holds').dropColumn('instance_id').execute();
}
