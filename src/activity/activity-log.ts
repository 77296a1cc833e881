// The activity log: one row per request. Rows are buffered and written in batches
// (every AGENT_API_ACTIVITY_FLUSH_MS) so logging costs the request path nothing;
// readers flush first, and shutdown flushes what is left.
// A crash loses what is buffered; the calls that reserved credits are rebuilt at the
// next start from their ledger entries (recover.ts). For that the log tracks the calls
// that reserved and whose row is not yet in the database, and now and then saves a
// mark: every ledger entry of this instance whose request id is older than the mark
// has its row. Request ids sort by time (ids.ts), so the recovery reads a range of the
// ledger's primary key, and the hot path writes no extra index.
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/db.ts';
import type { ActivityTable } from '../store/schema.ts';
import { idTime, recoverActivity, saveMark } from './recover.ts';

export type ActivityRow = ActivityTable;

/** How often at most the mark is saved while rows are written (one small write). */
const MARK_EVERY_MS = 1_000;
/**
 * The mark stays this far behind the clock, so a call that reserves this long after its
 * id was made (a slow upload, a batch line waiting for a slot) is still above it; one
 * later than that moves the mark back before it reserves (`expect`).
 */
const MARK_LAG_MS = 30_000;
/** Calls tracked at most; past it the oldest are folded into the floor (the mark then stays behind them). */
const MAX_OPEN = 100_000;

export class ActivityLog {
  private buffer: ActivityRow[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  /** Calls that reserved credits and whose row is not yet written: request id → its id's time. */
  private readonly open = new Map<string, number>();
  /** The mark never passes this: rows that could not be written (a failed batch), kept for the next start. */
  private floor = Infinity;
  /** The mark last saved (or being saved): a call older than it must move it back before it reserves. */
  private saved = -Infinity;
  private savedAt = 0;
  private wrote = false;

  constructor(
    private readonly store: Store,
    private readonly log: FastifyBaseLogger,
    flushMs: number,
    /** The instance whose mark this log keeps (AGENT_API_INSTANCE_ID). */
    private readonly instanceId = 'default',
    /**
     * What a batch of rows waits for before it is written: the credit settlements answered
     * before those rows were queued and not committed yet (Ledger.settling), so a row is
     * never in the database before its ledger entry (recovery rebuilds rows from entries).
     */
    private readonly beforeWrite: () => Promise<void> | undefined = () => undefined,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs).unref();
  }

  add(row: ActivityRow): void {
    this.buffer.push(row);
    if (this.buffer.length >= 500) void this.flush();
  }

  /**
   * A call is about to reserve credits (a ledger entry will follow): its row is owed until
   * written. Returns a promise only for a call older than the saved mark, which must be
   * saved lower first (rare: see MARK_LAG_MS); the caller awaits it before reserving.
   */
  expect(requestId: string): Promise<void> | undefined {
    const at = idTime(requestId);
    this.open.set(requestId, at);
    if (this.open.size > MAX_OPEN) {
      const [oldest, t] = this.open.entries().next().value!;
      this.open.delete(oldest);
      this.floor = Math.min(this.floor, t);
    }
    if (at >= this.saved) return undefined;
    this.flushing = this.flushing.then(() => this.saveMark());
    return this.flushing;
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
          await this.beforeWrite();
          await this.store.appendRows('activity', rows);
          for (const r of rows) this.open.delete(r.request_id);
        } catch (err) {
          this.log.error({ err, rows: rows.length }, 'activity log write failed');
          // Lost for now; the next start rebuilds those that reserved credits.
          for (const r of rows) {
            const at = this.open.get(r.request_id);
            if (at === undefined) continue;
            this.floor = Math.min(this.floor, at);
            this.open.delete(r.request_id);
          }
        }
        this.wrote = true;
      }
      if (this.wrote && Date.now() - this.savedAt >= MARK_EVERY_MS) await this.saveMark();
    });
    return this.flushing;
  }

  /** Every entry whose request id is older than this has its row in the database (or is past the floor). */
  private mark(): number {
    let at = Math.min(this.floor, Date.now() - MARK_LAG_MS);
    for (const t of this.open.values()) if (t < at) at = t;
    return at;
  }

  /** Runs in the flush chain, so it never overlaps a batch write or another save. */
  private async saveMark(): Promise<void> {
    const mark = this.mark();
    this.saved = mark;
    this.savedAt = Date.now();
    this.wrote = false;
    try {
      await saveMark(this.store, this.instanceId, mark);
    } catch (err) {
      this.log.warn({ err }, 'saving the activity mark failed');
    }
  }

  /**
   * At start, before serving: rebuilds the rows the previous process of this instance
   * had not written (recover.ts; `released`: the holds it left, just released).
   */
  async recover(released: readonly string[]): Promise<number> {
    const now = Date.now();
    const written = await recoverActivity(this.store, this.instanceId, released, now);
    this.saved = now;
    return written;
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
