// The ledger entry carries what an activity row needs (issue 18): a crash loses the
// activity rows still buffered in memory, while the settlement that charged them is
// durable; at start an instance rebuilds its missing rows from its entries
// (activity/recover.ts). So a hold names its call's endpoint and model, and the entry
// copies them with the instance that took the hold, plus the tokens and cost it was
// charged for. Entries from before this migration have none (never recovered). No
// index: the recovery reads a range of request ids (they begin with their time), and
// every index here is written on every model call.
import { SqliteAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('credit_holds').addColumn('endpoint', 'text').execute();
  await db.schema.alterTable('credit_holds').addColumn('model', 'text').execute();
  for (const [name, type] of [
    ['instance_id', 'text'],
    ['endpoint', 'text'],
    ['model', 'text'],
    ['input_tokens', 'bigint'],
    ['output_tokens', 'bigint'],
    /** micro-USD */
    ['cost_usd', 'bigint'],
  ] as const) {
    await db.schema.alterTable('credit_reservations').addColumn(name, type).execute();
  }
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`drop function if exists ledger_reserve(text[], text[], text[], bigint[], bigint, text, bigint)`.execute(db);
  await sql`drop function if exists ledger_settle(text[], bigint[], bigint)`.execute(db);
  await createFunctions(db);
}

/** This migration's PostgreSQL functions (also what 0021's down brings back). */
export async function createFunctions(db: Kysely<any>): Promise<void> {
  // As in 0012, with the call's endpoint and model written on each hold.
  await sql`
    create or replace function ledger_reserve(p_request_ids text[], p_account_ids text[], p_key_ids text[], p_amounts bigint[], p_at bigint, p_instance text, p_lease_until bigint,
      p_endpoints text[], p_models text[])
    returns setof text language plpgsql as $$
    declare
      r record;
    begin
      for r in
        select t.request_id, t.account_id, t.key_id, t.amount, t.endpoint, t.model
        from unnest(p_request_ids, p_account_ids, p_key_ids, p_amounts, p_endpoints, p_models) with ordinality as t(request_id, account_id, key_id, amount, endpoint, model, n)
        order by t.account_id, t.n
      loop
        update accounts set reserved = reserved + r.amount where id = r.account_id and balance - reserved >= r.amount;
        if found then
          insert into credit_holds (request_id, account_id, key_id, amount, created_at, instance_id, lease_until, endpoint, model)
            values (r.request_id, r.account_id, r.key_id, r.amount, p_at, p_instance, p_lease_until, r.endpoint, r.model);
          return next r.request_id;
        end if;
      end loop;
    end $$`.execute(db);
  // As in 0006, the entry copying the hold's instance, endpoint and model, with the tokens and cost charged for.
  await sql`
    create or replace function ledger_settle(p_request_ids text[], p_charges bigint[], p_at bigint, p_input_tokens bigint[], p_output_tokens bigint[], p_costs bigint[])
    returns setof text language plpgsql as $$
    declare
      r record;
    begin
      for r in
        select h.request_id, h.account_id, h.key_id, h.amount, h.created_at, h.instance_id, h.endpoint, h.model, t.charge, t.input_tokens, t.output_tokens, t.cost
        from unnest(p_request_ids, p_charges, p_input_tokens, p_output_tokens, p_costs) as t(request_id, charge, input_tokens, output_tokens, cost)
        join credit_holds h on h.request_id = t.request_id
        order by h.account_id, h.request_id
        for update of h
      loop
        delete from credit_holds where request_id = r.request_id;
        insert into credit_reservations (request_id, account_id, key_id, amount, status, charged, created_at, settled_at, instance_id, endpoint, model, input_tokens, output_tokens, cost_usd)
          values (r.request_id, r.account_id, r.key_id, r.amount, case when r.charge > 0 then 'settled' else 'released' end, r.charge, r.created_at, p_at,
            r.instance_id, r.endpoint, r.model, r.input_tokens, r.output_tokens, r.cost);
        update accounts set reserved = reserved - r.amount, balance = balance - r.charge where id = r.account_id;
        return next r.request_id;
      end loop;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql`drop function if exists ledger_reserve(text[], text[], text[], bigint[], bigint, text, bigint, text[], text[])`.execute(db);
    await sql`drop function if exists ledger_settle(text[], bigint[], bigint, bigint[], bigint[], bigint[])`.execute(db);
  }
  for (const name of ['cost_usd', 'output_tokens', 'input_tokens', 'model', 'endpoint', 'instance_id']) {
    await db.schema.alterTable('credit_reservations').dropColumn(name).execute();
  }
  await db.schema.alterTable('credit_holds').dropColumn('model').execute();
  await db.schema.alterTable('credit_holds').dropColumn('endpoint').execute();
}
