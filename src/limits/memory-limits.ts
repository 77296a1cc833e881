// In-process limits: a fixed one-minute window per key and a slot count per account.
import type { Limits, RateWindow } from './limits.ts';

const WINDOW_MS = 60_000;

export class MemoryLimits implements Limits {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly slots = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    // Forget windows that ended, so idle keys do not accumulate.
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [k, w] of this.windows) if (now - w.start >= WINDOW_MS) this.windows.delete(k);
    }, WINDOW_MS).unref();
  }

  async hitRequestsPerMinute(key: string, limit: number, now: number): Promise<RateWindow> {
    let w = this.windows.get(key);
    if (!w || now - w.start >= WINDOW_MS) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    const resetMs = w.start + WINDOW_MS - now;
    if (w.count >= limit) return { allowed: false, limit, remaining: 0, resetMs };
    w.count++;
    return { allowed: true, limit, remaining: limit - w.count, resetMs };
  }

  async acquireSlot(account: string, max: number): Promise<boolean> {
    const used = this.slots.get(account) ?? 0;
    if (used >= max) return false;
    this.slots.set(account, used + 1);
    return true;
  }

  async releaseSlot(account: string): Promise<void> {
    const used = this.slots.get(account) ?? 0;
    if (used <= 1) this.slots.delete(account);
    else this.slots.set(account, used - 1);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
