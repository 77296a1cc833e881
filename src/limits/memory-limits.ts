// In-process limits: a fixed one-minute window per key and the holders of each
// account's leases. Nothing outlives the process, so leases need no expiry here.
import { randomBytes } from 'node:crypto';
import type { Admission, Lease, LeaseKind, Limits, RateWindow } from './limits.ts';

export const WINDOW_MS = 60_000;

export class MemoryLimits implements Limits {
  private readonly windows = new Map<string, { start: number; count: number }>();
  /** `kind:account` -> its holders */
  private readonly leases = new Map<string, Set<string>>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly holderPrefix = `mem:${randomBytes(6).toString('hex')}:`;
  private nextHolder = 0;

  constructor(private readonly windowMs = WINDOW_MS) {
    // Forget windows that ended, so idle keys do not accumulate.
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k);
    }, this.windowMs).unref();
  }

  async hitRequestsPerMinute(key: string, limit: number, now: number): Promise<RateWindow> {
    return this.hit(key, limit, now);
  }

  /** The window's count, synchronously (also the fallback of RedisLimits while Redis is down). */
  hit(key: string, limit: number, now: number): RateWindow {
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    const resetMs = w.start + this.windowMs - now;
    if (w.count >= limit) return { allowed: false, limit, remaining: 0, resetMs };
    w.count++;
    return { allowed: true, limit, remaining: limit - w.count, resetMs };
  }

  async admit(key: string, rpm: number, account: string, maxSlots: number, now: number): Promise<Admission> {
    const window = this.hit(key, rpm, now);
    return { window, slot: window.allowed ? this.take('slot', account, maxSlots) : null };
  }

  async acquire(kind: LeaseKind, account: string, max: number): Promise<Lease | null> {
    return this.take(kind, account, max);
  }

  take(kind: LeaseKind, account: string, max: number): Lease | null {
    const id = `${kind}:${account}`;
    let holders = this.leases.get(id);
    if ((holders?.size ?? 0) >= max) return null;
    if (!holders) this.leases.set(id, (holders = new Set()));
    const holder = this.holderPrefix + this.nextHolder++;
    holders.add(holder);
    return { kind, account, holder };
  }

  async release(lease: Lease): Promise<void> {
    this.giveBack(lease);
  }

  /** True when this held the lease. */
  giveBack(lease: Lease): boolean {
    const id = `${lease.kind}:${lease.account}`;
    const holders = this.leases.get(id);
    if (!holders?.delete(lease.holder)) return false;
    if (holders.size === 0) this.leases.delete(id);
    return true;
  }

  async health(): Promise<null> {
    return null;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
