// Retry delays: exponential in the attempt, capped, with "equal jitter" (half fixed,
// half random) so jobs that failed together (an upstream outage) do not retry together.

export interface Backoff {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 1_000, maxMs: 5 * 60_000 };

/** The delay before the attempt after failed attempt `attempt` (1-based). */
export function backoffMs(attempt: number, { baseMs, maxMs }: Backoff, random: () => number = Math.random): number {
  const full = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  return Math.round(full / 2 + random() * (full / 2));
}
