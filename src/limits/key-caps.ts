// Key caps (requests, tokens, credits, spend per day/week/month/ever), counted in the
// database so they hold across restarts and instances. Requests are counted at
// admission with a conditional upsert, so concurrent requests cannot pass a request
// cap; tokens, credits and spend count settled figures.
import { sql, type Kysely } from 'kysely';
import { toMicro } from '../accounts/money.ts';
import type { KeyRecord } from '../keys/keys-service.ts';
import { periodEnd, periodStart, type KeyLimit, type LimitPeriod } from '../keys/key-limits.ts';
import type { Database } from '../store/schema.ts';

export interface CapRefusal {
  limit: KeyLimit;
}

export interface TokenWindow {
  limit: number;
  remaining: number;
  resetMs: number;
}

export interface SettledUsage {
  tokens: number;
  /** micro-credits */
  credits: number;
  /** micro-USD */
  spend: number;
}

/** Stored value of a limit's max in the counters' units. */
function maxInUnits(limit: KeyLimit): number {
  return limit.metric === 'credits' || limit.metric === 'spend' ? toMicro(limit.max) : limit.max;
}

export class KeyCaps {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Checks every cap of the key and counts this request against its request caps.
   * Returns the refused limit, or null and the tightest token window for headers.
   */
  async admit(key: KeyRecord, now: number): Promise<{ refused: CapRefusal | null; tokens: TokenWindow | null }> {
    if (key.limits.length === 0) return { refused: null, tokens: null };
    return this.db.transaction().execute(async (trx) => {
      const periods = [...new Set(key.limits.map((l) => l.period))];
      const rows = await trx
        .selectFrom('key_usage')
        .selectAll()
        .where('key_id', '=', key.id)
        .where((eb) => eb.or(periods.map((p) => eb.and([eb('period', '=', p), eb('period_start', '=', periodStart(p, now))]))))
        .execute();
      const used = (l: KeyLimit) => {
        const row = rows.find((r) => r.period === l.period);
        return row ? Number(row[l.metric]) : 0;
      };
      for (const l of key.limits) {
        if (l.metric !== 'requests' && used(l) >= maxInUnits(l)) return { refused: { limit: l }, tokens: null };
      }
      for (const l of key.limits) {
        if (l.metric !== 'requests') continue;
        const start = periodStart(l.period, now);
        const counted = await trx
          .insertInto('key_usage')
          .values({ key_id: key.id, period: l.period, period_start: start, requests: 1, tokens: 0, credits: 0, spend: 0 })
          .onConflict((oc) =>
            oc
              .columns(['key_id', 'period', 'period_start'])
              .doUpdateSet({ requests: sql`key_usage.requests + 1` })
              .where('key_usage.requests', '<', l.max),
          )
          .returning('requests')
          .executeTakeFirst();
        if (!counted) throw new CapReached(l);
      }
      return { refused: null, tokens: tightestTokenWindow(key.limits, used, now) };
    }).catch((err: unknown) => {
      if (err instanceof CapReached) return { refused: { limit: err.limit }, tokens: null };
      throw err;
    });
  }

  /** Adds settled usage to every period the key has a cap for. */
  async record(key: KeyRecord, usage: SettledUsage, now: number): Promise<void> {
    const periods = new Set<LimitPeriod>(key.limits.filter((l) => l.metric !== 'requests').map((l) => l.period));
    for (const period of periods) {
      await this.db
        .insertInto('key_usage')
        .values({ key_id: key.id, period, period_start: periodStart(period, now), requests: 0, ...usage })
        .onConflict((oc) =>
          oc.columns(['key_id', 'period', 'period_start']).doUpdateSet({
            tokens: sql`key_usage.tokens + ${usage.tokens}`,
            credits: sql`key_usage.credits + ${usage.credits}`,
            spend: sql`key_usage.spend + ${usage.spend}`,
          }),
        )
        .execute();
    }
  }
}

class CapReached extends Error {
  constructor(readonly limit: KeyLimit) {
    super('cap reached');
  }
}

function tightestTokenWindow(limits: KeyLimit[], used: (l: KeyLimit) => number, now: number): TokenWindow | null {
  let best: TokenWindow | null = null;
  for (const l of limits) {
    if (l.metric !== 'tokens') continue;
    const remaining = Math.max(0, l.max - used(l));
    const end = periodEnd(l.period, now);
    const window = { limit: l.max, remaining, resetMs: end === null ? 0 : end - now };
    if (!best || window.remaining < best.remaining) best = window;
  }
  return best;
}
