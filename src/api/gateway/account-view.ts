// What the gateway answers itself, in the aggregator's shapes with money in dollars, read
// from the ledger and the activity log (so they agree with what was charged): the calling
// key's limits and usage (GET /key), the account's credits (GET /credits), and one of the
// key's own requests (GET /generation).
import { sql } from 'kysely';
import { notFound } from '../../errors.ts';
import { periodStart, type KeyLimit } from '../../keys/key-limits.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import type { Services } from '../../services.ts';
import type { ActivityTable } from '../../store/schema.ts';

/** The lowest request id made at `at` or later (ids sort by time: ids.ts). */
const idFrom = (at: number) => `req_${Math.max(0, Math.floor(at)).toString(36).padStart(9, '0')}`;

const RESET: Record<KeyLimit['period'], 'daily' | 'weekly' | 'monthly' | null> = { day: 'daily', week: 'weekly', month: 'monthly', ever: null };

/** Micro-credits as dollars at the configured credits per dollar. */
function dollarsOf(services: Services, micro: number): number {
  return Number((Number(micro) / 1_000_000 / services.config.creditsPerUsd).toFixed(9));
}

/** Micro-credits the key's requests were charged since `from` (as settled, late costs included). */
async function chargedSince(services: Services, key: KeyRecord, from: number): Promise<number> {
  const row = await services.store.db
    .selectFrom('activity')
    .select(sql<number>`coalesce(sum(credits_settled), 0)`.as('charged'))
    .where('key_id', '=', key.id)
    .where('request_id', '>=', idFrom(from))
    .executeTakeFirst();
  return Number(row?.charged ?? 0);
}

export async function keyInfo(services: Services, key: KeyRecord, now = Date.now()) {
  await services.activity.flush();
  const [ever = 0, day = 0, week = 0, month = 0] = await Promise.all([0, periodStart('day', now), periodStart('week', now), periodStart('month', now)].map((from) => chargedSince(services, key, from)));
  // The money caps (credits and spend) in dollars; the one with the least left is the key's limit.
  let limit: { max: number; remaining: number; reset: 'daily' | 'weekly' | 'monthly' | null } | null = null;
  const money = key.limits.filter((l) => l.metric === 'credits' || l.metric === 'spend');
  if (money.length > 0) {
    const used = await services.store.db
      .selectFrom('key_usage')
      .select(['period', 'period_start', 'credits', 'spend'])
      .where('key_id', '=', key.id)
      .execute();
    for (const l of money) {
      const row = used.find((r) => r.period === l.period && Number(r.period_start) === periodStart(l.period, now));
      // A credits cap counts credits, a spend cap dollars of cost; both shown in dollars.
      const max = l.metric === 'credits' ? l.max / services.config.creditsPerUsd : l.max;
      const spent = l.metric === 'credits' ? dollarsOf(services, Number(row?.credits ?? 0)) : Number(row?.spend ?? 0) / 1_000_000;
      const remaining = Math.max(0, Number((max - spent).toFixed(9)));
      if (!limit || remaining < limit.remaining) limit = { max, remaining, reset: RESET[l.period] };
    }
  }
  return {
    data: {
      label: key.name,
      limit: limit?.max ?? null,
      limit_remaining: limit?.remaining ?? null,
      limit_reset: limit?.reset ?? null,
      include_byok_in_limit: false,
      usage: dollarsOf(services, ever),
      usage_daily: dollarsOf(services, day),
      usage_weekly: dollarsOf(services, week),
      usage_monthly: dollarsOf(services, month),
      byok_usage: 0,
      byok_usage_daily: 0,
      byok_usage_weekly: 0,
      byok_usage_monthly: 0,
      is_free_tier: false as const,
      is_management_key: false,
      is_provisioning_key: false,
      creator_user_id: null,
      expires_at: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
      rate_limit: { requests: Math.min(key.rpm ?? services.config.maxRpm, services.config.maxRpm), interval: '1m', note: "The key's requests per minute (its own limit, or the service's)." },
      allowed_data_regions: [],
      // No free models here: every request is charged.
      free_model_daily_requests: { limit: 0, remaining: 0, used: 0 },
      organization_id: null,
      workspace_id: null,
    },
  };
}

/** The account's credits: everything charged, and everything granted (the balance plus what was charged). */
export async function accountCredits(services: Services, key: KeyRecord) {
  // What this process already answered for is in the figures (PostgreSQL: committed after the answer).
  await services.ledger.settling(key.accountId);
  const [account, charged] = await Promise.all([
    services.store.db.selectFrom('accounts').select('balance').where('id', '=', key.accountId).executeTakeFirst(),
    services.store.db
      .selectFrom('credit_reservations')
      .select(sql<number>`coalesce(sum(charged), 0)`.as('charged'))
      .where('account_id', '=', key.accountId)
      .executeTakeFirst(),
  ]);
  const usage = Number(charged?.charged ?? 0);
  return { data: { total_credits: dollarsOf(services, Number(account?.balance ?? 0) + usage), total_usage: dollarsOf(services, usage) } };
}

/** One of the key's own requests by the upstream's generation id or our request id; 404 for any other. */
export async function generation(services: Services, key: KeyRecord, id: string) {
  await services.activity.flush();
  const row = await services.store.db
    .selectFrom('activity')
    .selectAll()
    .where('key_id', '=', key.id)
    .where((eb) => eb.or([eb('upstream_id', '=', id), eb('request_id', '=', id)]))
    .orderBy('request_id')
    .limit(1)
    .executeTakeFirst();
  if (!row) throw notFound(`No generation with id '${id}' was made with this API key.`, 'id');
  return { data: generationOf(services, row) };
}

function generationOf(services: Services, row: ActivityTable) {
  const cost = dollarsOf(services, Number(row.credits_settled));
  const tokensPrompt = Number(row.input_tokens);
  const tokensCompletion = Number(row.output_tokens);
  // Every field the aggregator's generation carries (its SDK requires them); what we do not know is null.
  return {
    id: row.upstream_id ?? row.request_id,
    upstream_id: row.upstream_id ?? null,
    request_id: row.request_id,
    model: row.model ?? '',
    created_at: new Date(Number(row.created_at) - Number(row.latency_ms)).toISOString(),
    total_cost: cost,
    usage: cost,
    upstream_inference_cost: null,
    cache_discount: null,
    tokens_prompt: tokensPrompt,
    tokens_completion: tokensCompletion,
    native_tokens_prompt: tokensPrompt,
    native_tokens_completion: tokensCompletion,
    native_tokens_completion_images: null,
    native_tokens_reasoning: null,
    native_tokens_cached: null,
    num_media_prompt: null,
    num_media_completion: null,
    num_input_audio_prompt: null,
    num_search_results: null,
    num_fetches: null,
    streamed: Number(row.streamed) === 1,
    cancelled: Number(row.status) === 499,
    finish_reason: row.finish_reason ?? null,
    native_finish_reason: row.finish_reason ?? null,
    latency: Number(row.latency_ms),
    generation_time: null,
    moderation_latency: null,
    origin: '',
    api_type: apiTypeOf(row.endpoint),
    app_id: null,
    data_region: 'global',
    external_user: row.end_user ?? null,
    http_referer: null,
    is_byok: false,
    preset_id: null,
    provider_name: null,
    provider_responses: null,
    router: null,
    service_tier: null,
    user_agent: null,
    web_search_engine: null,
    workspace_id: null,
    status: Number(row.status),
  };
}

/** The aggregator's `api_type` of a forwarded endpoint. */
function apiTypeOf(endpoint: string): string | null {
  const path = endpoint.slice(endpoint.lastIndexOf('/v1/') + 3);
  if (path === '/chat/completions' || path === '/completions') return 'completions';
  if (path === '/embeddings') return 'embeddings';
  if (path === '/audio/speech') return 'tts';
  if (path === '/audio/transcriptions') return 'stt';
  if (path.startsWith('/images')) return 'image';
  return null;
}
