// Counters and leases behind one interface: in-process for a single instance
// (memory-limits.ts), on Redis for several (redis-limits.ts, REDIS_URL). Both pass one
// test suite (limits-suite.test.ts).

export interface RateWindow {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** milliseconds until the window resets */
  resetMs: number;
}

/**
 * What an account holds a bounded number of at once: concurrency slots (a running call)
 * and Responses WebSockets.
 */
export type LeaseKind = 'slot' | 'socket';

/** One slot or socket taken; given back with `release`. */
export interface Lease {
  readonly kind: LeaseKind;
  readonly account: string;
  /** Unique across instances and restarts: whose lease this is. */
  readonly holder: string;
}

export interface Admission {
  window: RateWindow;
  slot: Lease | null;
}

/** The state of the backend outside the process, for /readyz. */
export interface LimitsHealth {
  backend: 'redis';
  ok: boolean;
  /** Why it is not ok. */
  error?: string;
}

export interface Limits {
  /** Counts one request in the per-minute window of `key`; refused requests are not counted. */
  hitRequestsPerMinute(key: string, limit: number, now: number): Promise<RateWindow>;
  /**
   * The limits step in one round trip: `hitRequestsPerMinute`, then, when the request is
   * allowed, `acquire('slot', account, maxSlots)` (slot null: refused, or all held).
   */
  admit(key: string, rpm: number, account: string, maxSlots: number, now: number): Promise<Admission>;
  /**
   * Takes one of the `max` leases of `kind` of `account`, or null when all are held. A
   * lease is held until released; one whose holder stopped (a crashed instance) comes
   * back within the lease period on a shared backend.
   */
  acquire(kind: LeaseKind, account: string, max: number): Promise<Lease | null>;
  /** Gives a lease back. Never throws (a lease that cannot be given back expires); a second release does nothing. */
  release(lease: Lease): Promise<void>;
  /** The shared backend's state; null when there is none (in-process). */
  health(): Promise<LimitsHealth | null>;
  close(): Promise<void>;
}

/** `12s` style, rounded up, as the reference API's x-ratelimit-reset-* headers. */
export function formatReset(ms: number): string {
  return `${Math.max(0, Math.ceil(ms / 1000))}s`;
}
