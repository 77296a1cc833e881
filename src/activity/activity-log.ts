// The activity log: one row per request. Rows are buffered and written in batches
// (every AGENT_API_ACTIVITY_FLUSH_MS) so logging costs the request path nothing;
// readers flush first, and shutdown flushes what is left.
// A crash loses what is buffered; the calls that ran a model are rebuilt at the next
// start from their ledger entries (recover.ts). For that the log tracks the calls whose
// settlement is being written and whose row is not yet in the database, and now and
// then saves a mark: every entry of this instance settled before it has its row.
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/db.ts';
import type { ActivityTable } from '../store/schema.ts';
import { saveMark } from './recover.ts';

export type ActivityRow = ActivityTable;

/** How often at most the mark is saved while rows are written (one small write). */
const MARK_EVERY_MS = 1_000;
/** Calls tracked at most; past it the oldest are folded into the floor (the mark then stays behind them). */
const MAX_EXPECTED = 100_000;

export class ActivityLog {
  private buffer: ActivityRow[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  /** Calls whose settlement is written and whose row is not yet: request id → when it settled. */
  private readonly expected = new Map<string, number>();
  /** The mark never passes this: rows that could not be written (a failed batch), kept for the next start. */
  private floor = Infinity;
  private markedAt = 0;
  private wrote = false;

  constructor(
    private readonly store: Store,
    private readonly log: FastifyBaseLogger,
    flushMs: number,
    /** The instance whose mark this log keeps (AGENT_API_INSTANCE_ID). */
    private readonly instanceId = 'default',
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs).unref();
  }

  add(row: ActivityRow): void {
    this.buffer.push(row);
    if (this.buffer.length >= 500) void this.flush();
  }

  /**
   * A call's settlement is about to be written: its row is owed from now on. Called
   * before the ledger takes the settlement's time, so the mark never passes it.
   */
  expect(requestId: string): void {
    this.expected.set(requestId, Date.now());
    if (this.expected.size > MAX_EXPECTED) {
      const [oldest, at] = this.expected.entries().next().value!;
      this.expected.delete(oldest);
      this.floor = Math.min(this.floor, at);
    }
  }

  /** Rows waiting for the next batch write (a metric). */
  get pending(): number {
    return this.buffer.length;
  }

  /** Writes every buffered row; resolves when they are in the database. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.buffer.length > 0) {
        const rows = this.buffer;
        this.buffer = [];
        try {
          await this.store.appendRows('activity', rows);
          for (const r of rows) this.expected.delete(r.request_id);
        } catch (err) {
          this.log.error({ err, rows: rows.length }, 'activity log write failed');
          // Lost for now; the next start rebuilds those that ran a model.
          for (const r of rows) {
            const at = this.expected.get(r.request_id);
            if (at === undefined) continue;
            this.floor = Math.min(this.floor, at);
            this.expected.delete(r.request_id);
          }
        }
        this.wrote = true;
      }
      if (this.wrote && Date.now() - this.markedAt >= MARK_EVERY_MS) await this.saveMark();
    });
    return this.flushing;
  }

  /** Every entry settled before this has its row in the database (or is before the floor). */
  private mark(): number {
    let at = Math.min(this.floor, Date.now());
    for (const t of this.expected.values()) if (t < at) at = t;
    return at;
  }

  private async saveMark(): Promise<void> {
    this.markedAt = Date.now();
    this.wrote = false;
    try {
      await saveMark(this.store, this.instanceId, this.mark());
    } catch (err) {
      this.log.warn({ err }, 'saving the activity mark failed');
    }
  }

  /** Updates a row after the fact (a late provider cost settling). */
  async update(requestId: string, patch: Partial<Omit<ActivityRow, 'request_id'>>): Promise<void> {
    await this.flush();
    await this.store.db.updateTable('activity').set(patch).where('request_id', '=', requestId).execute();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    this.flushing = this.flushing.then(() => this.saveMark());
    await this.flushing;
  }
}
