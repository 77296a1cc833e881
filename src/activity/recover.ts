// Activity rows a crash lost, rebuilt from the ledger. The activity log buffers rows in
// memory (activity-log.ts); the settlement that charged a call is durable before its row
// is even queued. So the ledger entry is the truth, and each instance keeps a durable
// mark in `meta`: every entry of this instance settled before the mark has its activity
// row. At start, before it serves, an instance writes the rows missing for its own
// entries settled since its mark (settled calls whose rows were still in memory, and
// the calls cut off in flight, whose holds it has just released), then moves the mark
// to now. Only its own entries: another live instance's rows may still be in its memory.
import { sql } from 'kysely';
import type { Store } from '../store/db.ts';

/** The error code of a row rebuilt from the ledger (its status is 0: what the caller got is unknown). */
export const RECOVERED = 'recovered_after_crash';

/**
 * Entries settled this long before the mark are looked at too: the mark is taken from
 * this process's clock, the entry's time from the moment its statement was queued.
 */
const MARK_SLACK_MS = 10_000;

const markKey = (instanceId: string) => `activity_mark:${instanceId}`;

/** Records that every entry of `instanceId` settled before `at` has its activity row. */
export async function saveMark(store: Store, instanceId: string, at: number): Promise<void> {
  const value = String(Math.floor(at));
  await store.db
    .insertInto('meta')
    .values({ key: markKey(instanceId), value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}

/**
 * Writes the activity rows missing for this instance's ledger entries settled since its
 * mark, then moves the mark to `now`. Returns how many it wrote. Idempotent: a row that
 * exists is left alone (the request id is the activity log's key).
 */
export async function recoverActivity(store: Store, instanceId: string, now = Date.now()): Promise<number> {
  const { db } = store;
  const mark = await db.selectFrom('meta').select('value').where('key', '=', markKey(instanceId)).executeTakeFirst();
  // No mark: this instance never started with this code, so it has no entries to look at.
  const since = mark ? Number(mark.value) - MARK_SLACK_MS : 0;
  const missing = db
    .selectFrom('credit_reservations as r')
    .where('r.instance_id', '=', instanceId)
    .where('r.settled_at', '>=', since)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('activity as a').select('a.request_id').whereRef('a.request_id', '=', 'r.request_id'))))
    .select([
      'r.request_id',
      sql<number>`coalesce(r.settled_at, r.created_at)`.as('created_at'),
      'r.account_id',
      'r.key_id',
      sql<string>`'POST'`.as('method'),
      sql<string>`coalesce(r.endpoint, '')`.as('endpoint'),
      'r.model',
      sql<number>`0`.as('status'),
      sql<string>`${sql.lit(RECOVERED)}`.as('error_code'),
      sql<number>`coalesce(r.input_tokens, 0)`.as('input_tokens'),
      sql<number>`coalesce(r.output_tokens, 0)`.as('output_tokens'),
      'r.amount',
      'r.charged',
      sql<number>`coalesce(r.cost_usd, 0)`.as('cost_usd'),
      sql<number>`coalesce(r.settled_at - r.created_at, 0)`.as('latency_ms'),
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
  await saveMark(store, instanceId, now);
  return Number(result.numInsertedOrUpdatedRows ?? 0);
}
