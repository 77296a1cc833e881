// Counters and slots behind one interface: in-process for a single instance
// (memory-limits.ts); a shared backend (Redis) implements the same interface for
// several instances.

export interface RateWindow {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** milliseconds until the window resets */
  resetMs: number;
}

export interface Limits {
  /** Counts one request in the per-minute window of `key`; refused requests are not counted. */
  hitRequestsPerMinute(key: string, limit: number, now: number): Promise<RateWindow>;
  /** Takes one of `max` concurrent slots of `account`; false when all are taken. */
  acquireSlot(account: string, max: number): Promise<boolean>;
  releaseSlot(account: string): Promise<void>;
  close(): Promise<void>;
}

/** `12s` style, rounded up, as the reference API's x-ratelimit-reset-* headers. */
export function formatReset(ms: number): string {
  return `${Math.max(0, Math.ceil(ms / 1000))}s`;
}
