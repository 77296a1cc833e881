// Reading the activity log: filters and cursor pagination by row id (ids sort by time).
import type { Kysely } from 'kysely';
import { fromMicro } from '../accounts/money.ts';
import type { Database } from '../store/schema.ts';
import type { ActivityRow } from './activity-log.ts';

export interface ActivityFilter {
  key_id?: string | undefined;
  account_id?: string | undefined;
  client_request_id?: string | undefined;
  request_id?: string | undefined;
  limit: number;
  after?: string | undefined;
  order: 'asc' | 'desc';
}

export function viewActivity(r: ActivityRow) {
  return {
    id: r.request_id,
    object: 'activity' as const,
    created_at: Math.floor(r.created_at / 1000),
    created_at_ms: r.created_at,
    account_id: r.account_id,
    key_id: r.key_id,
    method: r.method,
    endpoint: r.endpoint,
    model: r.model,
    status: r.status,
    error_code: r.error_code,
    request_id: r.request_id,
    client_request_id: r.client_request_id,
    user: r.end_user,
    safety_identifier: r.safety_identifier,
    input_tokens: r.input_tokens,
    output_tokens: r.output_tokens,
    credits_reserved: fromMicro(r.credits_reserved),
    credits_settled: fromMicro(r.credits_settled),
    cost_usd: fromMicro(r.cost_usd),
    latency_ms: r.latency_ms,
    moderation: r.moderation ? (JSON.parse(r.moderation) as { flagged: string[] }) : null,
  };
}

export async function queryActivity(db: Kysely<Database>, f: ActivityFilter) {
  let q = db.selectFrom('activity').selectAll();
  if (f.key_id) q = q.where('key_id', '=', f.key_id);
  if (f.account_id) q = q.where('account_id', '=', f.account_id);
  if (f.client_request_id) q = q.where('client_request_id', '=', f.client_request_id);
  if (f.request_id) q = q.where('request_id', '=', f.request_id);
  if (f.after) q = q.where('request_id', f.order === 'desc' ? '<' : '>', f.after);
  const rows = await q.orderBy('request_id', f.order).limit(f.limit + 1).execute();
  const page = rows.slice(0, f.limit).map(viewActivity);
  return {
    object: 'list' as const,
    data: page,
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
    has_more: rows.length > f.limit,
  };
}
