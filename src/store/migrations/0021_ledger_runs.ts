// Holds and ledger entries are keyed by run (issue 19): a call may hold several runs
// (each step of a tool loop that reserves apart, each tool fee, each platform turn).
// The key column becomes `run_id` and `request_id` names the call. A call's first run
// takes the call's request id as its run id and its further runs `<request id>.1`,
// `.2`, ..., so every row already there is its call's first run, and a call's runs
// are adjacent in the key's order: a range of the key finds them without an index
// (every index here is written on every model call). Holds from before this migration
// are released like any other.
import { SqliteAdapter, sql, type Kysely } from 'kysely';
import { createFunctions as functions0020 } from './0020_ledger_activity.ts';

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['credit_holds', 'credit_reservations']) {
    await db.schema.alterTable(table).renameColumn('request_id', 'run_id').execute();
    await db.schema.alterTable(table).addColumn('request_id', 'text').execute();
    await sql`update ${sql.table(table)} set request_id = run_id`.execute(db);
  }
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`drop function if exists ledger_reserve(text[], text[], text[], bigint[], bigint, text, bigint, text[], text[])`.execute(db);
  await sql`drop function if exists ledger_settle(text[], bigint[], bigint, bigint[], bigint[], bigint[])`.execute(db);
  // As in 0020, keyed by run, each hold naming its call.
  await sql`
    create or replace function ledger_reserve(p_run_ids text[], p_request_ids text[], p_account_ids text[], p_key_ids text[], p_amounts bigint[], p_at bigint, p_instance text,
      p_lease_until bigint, p_endpoints text[], p_models text[])
    returns setof text language plpgsql as $$
    declare
      r record;
    begin
      for r in
        select t.run_id, t.request_id, t.account_id, t.key_id, t.amount, t.endpoint, t.model
        from unnest(p_run_ids, p_request_ids, p_account_ids, p_key_ids, p_amounts, p_endpoints, p_models) with ordinality as t(run_id, request_id, account_id, key_id, amount, endpoint, model, n)
        order by t.account_id, t.n
      loop
        update accounts set reserved = reserved + r.amount where id = r.account_id and balance - reserved >= r.amount;
        if found then
          insert into credit_holds (run_id, request_id, account_id, key_id, amount, created_at, instance_id, lease_until, endpoint, model)
            values (r.run_id, r.request_id, r.account_id, r.key_id, r.amount, p_at, p_instance, p_lease_until, r.endpoint, r.model);
          return next r.run_id;
        end if;
      end loop;
    end $$`.execute(db);
  await sql`
    create or replace function ledger_settle(p_run_ids text[], p_charges bigint[], p_at bigint, p_input_tokens bigint[], p_output_tokens bigint[], p_costs bigint[])
    returns setof text language plpgsql as $$
    declare
      r record;
    begin
      for r in
        select h.run_id, h.request_id, h.account_id, h.key_id, h.amount, h.created_at, h.instance_id, h.endpoint, h.model, t.charge, t.input_tokens, t.output_tokens, t.cost
        from unnest(p_run_ids, p_charges, p_input_tokens, p_output_tokens, p_costs) as t(run_id, charge, input_tokens, output_tokens, cost)
        join credit_holds h on h.run_id = t.run_id
        order by h.account_id, h.run_id
        for update of h
      loop
        delete from credit_holds where run_id = r.run_id;
        insert into credit_reservations (run_id, request_id, account_id, key_id, amount, status, charged, created_at, settled_at, instance_id, endpoint, model, input_tokens, output_tokens, cost_usd)
          values (r.run_id, r.request_id, r.account_id, r.key_id, r.amount, case when r.charge > 0 then 'settled' else 'released' end, r.charge, r.created_at, p_at,
            r.instance_id, r.endpoint, r.model, r.input_tokens, r.output_tokens, r.cost);
        update accounts set reserved = reserved - r.amount, balance = balance - r.charge where id = r.account_id;
        return next r.run_id;
      end loop;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql`drop function if exists ledger_reserve(text[], text[], text[], text[], bigint[], bigint, text, bigint, text[], text[])`.execute(db);
    await sql`drop function if exists ledger_settle(text[], bigint[], bigint, bigint[], bigint[], bigint[])`.execute(db);
  }
  for (const table of ['credit_holds', 'credit_reservations']) {
    // Before this migration a call has one row: the rows of further runs have nowhere to go.
    const further = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where run_id <> request_id`.execute(db);
    if (Number(further.rows[0]?.n ?? 0) > 0) throw new Error(`${table} holds calls with several runs, which no schema before 0021 can record`);
    await db.schema.alterTable(table).dropColumn('request_id').execute();
    await db.schema.alterTable(table).renameColumn('run_id', 'request_id').execute();
  }
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) await functions0020(db);
}
