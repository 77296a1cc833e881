// PostgreSQL: the ledger's batch statements. One call reserves (or settles) every hold
// queued in one turn of the event loop: one round trip and one commit for them all.
// Rows are locked in one order, accounts by id, in both functions, so two batches
// running at once cannot deadlock. SQLite runs its ledger in-process and needs none.
import { SqliteAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  // Returns the request ids that got their hold; the others could not be covered.
  await sql`
    create or replace function ledger_reserve(p_request_ids text[], p_account_ids text[], p_key_ids text[], p_amounts bigint[], p_at bigint)
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
          insert into credit_holds (request_id, account_id, key_id, amount, created_at) values (r.request_id, r.account_id, r.key_id, r.amount, p_at);
          return next r.request_id;
        end if;
      end loop;
    end $$`.execute(db);
  // Returns the request ids whose hold was there and is now settled.
  await sql`
    create or replace function ledger_settle(p_request_ids text[], p_charges bigint[], p_at bigint)
    returns setof text language plpgsql as $$
    declare
      r record;
    begin
      for r in
        select h.request_id, h.account_id, h.key_id, h.amount, h.created_at, t.charge
        from unnest(p_request_ids, p_charges) as t(request_id, charge)
        join credit_holds h on h.request_id = t.request_id
        order by h.account_id, h.request_id
        for update of h
      loop
        delete from credit_holds where request_id = r.request_id;
        insert into credit_reservations (request_id, account_id, key_id, amount, status, charged, created_at, settled_at)
          values (r.request_id, r.account_id, r.key_id, r.amount, case when r.charge > 0 then 'settled' else 'released' end, r.charge, r.created_at, p_at);
        update accounts set reserved = reserved - r.amount, balance = balance - r.charge where id = r.account_id;
        return next r.request_id;
      end loop;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`drop function if exists ledger_reserve(text[], text[], text[], bigint[], bigint)`.execute(db);
  await sql`drop function if exists ledger_settle(text[], bigint[], bigint)`.execute(db);
}
