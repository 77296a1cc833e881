// Activity rows a crash lost, rebuilt from the ledger. The activity log buffers rows in
// memory (activity-log.ts); the settlement that charged a call is durable before its row
// is even queued. So the ledger entry is the truth, and each instance keeps a durable
// mark in `meta`: every entry of this instance whose request id is older than the mark
// has its activity row. At start, before it serves, an instance writes the rows missing
// for its own entries from the mark on (settled calls whose rows were still in memory,
// and the calls cut off in flight, whose holds it has just released), then moves the
// mark to now. Request ids begin with their time (ids.ts), and run ids with their
// call's request id, so "from the mark on" is a range of the ledger's primary key; a
// call's runs are summed into its one row. Only its own entries: another live instance's rows
// may still be in its memory.
import { sql, type ExpressionBuilder, type ExpressionWrapper, type SqlBool } from 'kysely';
import { callRuns } from '../credits/ledger.ts';
import type { Store } from '../store/db.ts';
import type { Database } from '../store/schema.ts';

/** The error code of a row rebuilt from the ledger (its status is 0: what the caller got is unknown). */
export const RECOVERED = 'recovered_after_crash';

/** Entries this much older than the mark are looked at too (a clock stepped back). */
const MARK_SLACK_MS = 10_000;

const markKey = (instanceId: string) => `activity_mark:${instanceId}`;

/** The time (Unix ms) a request id was made at (`req_` + 9 base-36 characters, ids.ts); 0 for any other id. */
export function idTime(requestId: string): number {
  const t = /^req_([0-9a-z]{9})/.exec(requestId);
  return t ? parseInt(t[1]!, 36) : 0;
}

/** The lowest request id made at `at` or later. */
const idFrom = (at: number) => `req_${Math.max(0, Math.floor(at)).toString(36).padStart(9, '0')}`;

/** Records that every entry of `instanceId` whose request id is older than `at` has its activity row. */
export async function saveMark(store: Store, instanceId: string, at: number): Promise<void> {
  const value = String(Math.floor(at));
  await store.db
    .insertInto('meta')
    .values({ key: markKey(instanceId), value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}

/**
 * Writes the activity rows missing for this instance's ledger entries from its mark on,
 * and for `released` (the holds of its previous process it has just released: calls cut
 * off in flight, whatever their age), then moves the mark to `now`. Returns how many it
 * wrote. Idempotent: a row that exists is left alone (the request id is the activity
 * log's key). Run before the instance serves: none of its calls is under way.
 */
export async function recoverActivity(store: Store, instanceId: string, released: readonly string[] = [], now = Date.now()): Promise<number> {
  const { db } = store;
  const mark = await db.selectFrom('meta').select('value').where('key', '=', markKey(instanceId)).executeTakeFirst();
  let written = 0;
  // No mark: this instance never served with this code, so none of its entries is owed a
  // row beyond the calls just released.
  if (mark) written += await insertMissing(store, instanceId, (eb) => eb('r.run_id', '>=', idFrom(Number(mark.value) - MARK_SLACK_MS)));
  for (let i = 0; i < released.length; i += 100) {
    // Each call's runs are one range of the key (credits/ledger.ts callRuns).
    const ranges = released.slice(i, i + 100).map(callRuns);
    written += await insertMissing(store, instanceId, (eb) => eb.or(ranges.map(({ from, to }) => eb.and([eb('r.run_id', '>=', from), eb('r.run_id', '<', to)]))));
  }
  await saveMark(store, instanceId, now);
  return written;
}

type Reservations = ExpressionBuilder<Database & { r: Database['credit_reservations'] }, 'r'>;

/** Inserts, marked recovered, the activity rows missing for the calls of this instance's entries that `which` selects: one per call, its runs summed. */
async function insertMissing(store: Store, instanceId: string, which: (eb: Reservations) => ExpressionWrapper<Database & { r: Database['credit_reservations'] }, 'r', SqlBool>): Promise<number> {
  const { db } = store;
  const missing = db
    .selectFrom('credit_reservations as r')
    .where(which)
    .where('r.instance_id', '=', instanceId)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('activity as a').select('a.request_id').whereRef('a.request_id', '=', 'r.request_id'))))
    .groupBy('r.request_id')
    .select([
      'r.request_id',
      sql<number>`coalesce(max(r.settled_at), min(r.created_at))`.as('created_at'),
      sql<string>`max(r.account_id)`.as('account_id'),
      sql<string | null>`max(r.key_id)`.as('key_id'),
      sql<string>`'POST'`.as('method'),
      sql<string>`coalesce(max(r.endpoint), '')`.as('endpoint'),
      sql<string | null>`max(r.model)`.as('model'),
      sql<number>`0`.as('status'),
      sql<string>`${sql.lit(RECOVERED)}`.as('error_code'),
      sql<number>`sum(coalesce(r.input_tokens, 0))`.as('input_tokens'),
      sql<number>`sum(coalesce(r.output_tokens, 0))`.as('output_tokens'),
      sql<number>`sum(r.amount)`.as('amount'),
      sql<number>`sum(r.charged)`.as('charged'),
      sql<number>`sum(coalesce(r.cost_usd, 0))`.as('cost_usd'),
      sql<number>`coalesce(max(r.settled_at) - min(r.created_at), 0)`.as('latency_ms'),
    ]);
  const result = await db
    .insertInto('activity')
    .columns([
      'request_id',
      'created_at',
      'account_id',
      'key_id',
      'method',
      'endpoint',
      'model',
      'status',
      'error_code',
      'input_tokens',
      'output_tokens',
      'credits_reserved',
      'credits_settled',
      'cost_usd',
      'latency_ms',
    ])
    .expression(missing)
    .onConflict((oc) => oc.column('request_id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0);
}
