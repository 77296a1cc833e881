// Key caps: a metric counted over a calendar period (UTC). "ever" never resets.
import { z } from 'zod';

export const LIMIT_METRICS = ['requests', 'tokens', 'credits', 'spend'] as const;
export const LIMIT_PERIODS = ['day', 'week', 'month', 'ever'] as const;
export type LimitMetric = (typeof LIMIT_METRICS)[number];
export type LimitPeriod = (typeof LIMIT_PERIODS)[number];

export const keyLimitSchema = z.object({
  metric: z.enum(LIMIT_METRICS),
  period: z.enum(LIMIT_PERIODS),
  /** requests and tokens count units; credits are credits; spend is USD */
  max: z.number().positive().max(1e12),
});
export type KeyLimit = z.infer<typeof keyLimitSchema>;

/**
 * A request's output cap: what it asked for (or the service default), never above the
 * key's own cap (SPEC: max_tokens is "also capped by the key"). The credit reservation
 * is taken for this many output tokens.
 */
export function outputCap(requested: number | null | undefined, keyCap: number | null, serviceDefault: number): number {
  const cap = requested ?? serviceDefault;
  return keyCap === null ? cap : Math.min(cap, keyCap);
}

/** Start of the period containing `now` (UTC; weeks start on Monday). */
export function periodStart(period: LimitPeriod, now: number): number {
  if (period === 'ever') return 0;
  const d = new Date(now);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (period === 'day') return day;
  if (period === 'week') return day - ((d.getUTCDay() + 6) % 7) * 86_400_000;
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** End of the period containing `now`, or null for "ever". */
export function periodEnd(period: LimitPeriod, now: number): number | null {
  if (period === 'ever') return null;
  const start = periodStart(period, now);
  if (period === 'day') return start + 86_400_000;
  if (period === 'week') return start + 7 * 86_400_000;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}
