// A check of something outside the process (the upstream), run at most once per period
// however many callers ask: /readyz may be polled by every load balancer and
// orchestrator in front of every instance, and each poll must not become an upstream call.

export interface ProbeResult {
  ok: boolean;
  /** When the check finished (ms since the epoch). */
  checkedAt: number;
  /** Why it failed, when it did. */
  error?: string;
}

export class CachedProbe {
  private last: ProbeResult | undefined;
  private running: Promise<ProbeResult> | undefined;
  private startedAt = 0;

  constructor(
    private readonly check: () => Promise<void>,
    /** How long a result is reused, counted from the start of the check that produced it. */
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The last result while it is fresh; else the result of a new check (one at a time: callers share it). */
  get(): Promise<ProbeResult> {
    if (this.running) return this.running;
    if (this.last && this.now() - this.startedAt < this.ttlMs) return Promise.resolve(this.last);
    this.startedAt = this.now();
    this.running = this.check().then(
      () => this.settle({ ok: true, checkedAt: this.now() }),
      (err: unknown) => this.settle({ ok: false, checkedAt: this.now(), error: err instanceof Error ? err.message : String(err) }),
    );
    return this.running;
  }

  private settle(result: ProbeResult): ProbeResult {
    this.last = result;
    this.running = undefined;
    return result;
  }
}
