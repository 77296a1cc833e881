// Costs the upstream did not report with its answer (no usage asked for, speech bytes, a
// stream cut short): its GET /generation knows the final cost a few seconds later (it
// answers 404 until then). Each such call is asked about every retry interval for the
// configured window; the first cost found corrects the call's ledger entry and activity
// row (credits/late-cost.ts). Past the window the price-based charge stands.
import { applyLateCost } from '../../credits/late-cost.ts';
import type { Aggregator } from '../../providers/aggregator/aggregator.ts';
import type { Services } from '../../services.ts';

/** Calls watched at once at most; past it the oldest keeps its price-based charge. */
const MAX_WATCHED = 10_000;

export class LateCosts {
  private readonly watched = new Map<string, NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly services: Pick<Services, 'ledger' | 'activity' | 'config'> & { log: { warn(obj: object, msg: string): void } },
    private readonly aggregator: Aggregator | null,
    private readonly windowMs: number,
    private readonly retryMs: number,
  ) {}

  /** `runId`: the call's ledger entry (a gateway call's one run has its request id). */
  watch(runId: string, generationId: string): void {
    if (!this.aggregator || this.closed || this.windowMs === 0 || this.watched.has(runId)) return;
    if (this.watched.size >= MAX_WATCHED) {
      const [oldest, timer] = this.watched.entries().next().value!;
      clearTimeout(timer);
      this.watched.delete(oldest);
    }
    const until = Date.now() + this.windowMs;
    const ask = async () => {
      this.watched.delete(runId);
      let done = false;
      try {
        const cost = await this.aggregator!.generationCost(generationId, AbortSignal.timeout(this.retryMs * 5 + 5_000));
        if (cost) done = await applyLateCost(this.services, runId, cost.totalCost);
      } catch (err) {
        this.services.log.warn({ err, run_id: runId }, 'asking the upstream for a late cost failed');
      }
      if (!done && !this.closed && Date.now() + this.retryMs <= until) this.watched.set(runId, setTimeout(ask, this.retryMs).unref());
    };
    this.watched.set(runId, setTimeout(ask, this.retryMs).unref());
  }

  /** Calls still waiting for their cost (a metric, and tests). */
  get pending(): number {
    return this.watched.size;
  }

  close(): void {
    this.closed = true;
    for (const t of this.watched.values()) clearTimeout(t);
    this.watched.clear();
  }
}
