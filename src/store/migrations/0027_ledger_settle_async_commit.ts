// PostgreSQL: a settlement commits without waiting for its WAL flush (issue 25), so the
// one synchronous commit on a model call's path is its reservation's. The settlement is
// answered before its commit anyway (credits/ledger.ts settle); committed asynchronously
// it frees its connection and reaches the reads waiting for it (Ledger.settling) a disk
// flush sooner, and the WAL writer flushes many together (wal_writer_delay, 200 ms by
// default). Why that loses nothing that matters: the hold it closes was committed
// durably, and a settlement lowers the hold to a charge no larger; should a crash of
// the database itself lose the last settlements, their holds are there again, counted
// as reserved, and released at their instance's next start. A crash of this process
// loses nothing once PostgreSQL has the statement: it finishes and commits it alone.
// `set_config(..., true)` lasts to the end of the transaction, whose commit reads it
// (a function's own SET clause would be undone when it returns, before the commit).
// SQLite: nothing to do (its settlements are group-committed with synchronous = NORMAL).
import { SqliteAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await settleFunction(db, true);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await settleFunction(db, false);
}

/** ledger_settle as 0021 made it, committed asynchronously or not. */
async function settleFunction(db: Kysely<any>, asyncCommit: boolean): Promise<void> {
  const commit = asyncCommit ? sql`perform set_config('synchronous_commit', 'off', true);` : sql``;
  await sql`
    create or replace function ledger_settle(p_run_ids text[], p_charges bigint[], p_at bigint, p_input_tokens bigint[], p_output_tokens bigint[], p_costs bigint[])
    returns setof text language plpgsql as $$
    declare
      r record;
    begin
      ${commit}
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
