// The activity log: one row per request. Rows are buffered and written in batches
// (every AGENT_API_ACTIVITY_FLUSH_MS) so logging costs the request path nothing;
// readers flush first, and shutdown flushes what is left.
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/db.ts';
import type { ActivityTable } from '../store/schema.ts';

export type ActivityRow = ActivityTable;

export class ActivityLog {
  private buffer: ActivityRow[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly store: Store,
    private readonly log: FastifyBaseLogger,
    flushMs: number,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs).unref();
  }

  add(row: ActivityRow): void {
    this.buffer.push(row);
    if (this.buffer.length >= 500) void this.flush();
  }

  /** Rows waiting for the next batch write (a metric). */
  get pending(): number {
    return this.buffer.length;
  }

  /** Writes every buffered row; resolves when they are in the database. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.buffer.length === 0) return;
      const rows = this.buffer;
      this.buffer = [];
      try {
        await this.store.appendRows('activity', rows);
      } catch (err) {
        this.log.error({ err, rows: rows.length }, 'activity log write failed');
      }
    });
    return this.flushing;
  }

  /** Updates a row after the fact (a late provider cost settling). */
  async update(requestId: string, patch: Partial<Omit<ActivityRow, 'request_id'>>): Promise<void> {
    await this.flush();
    await this.store.db.updateTable('activity').set(patch).where('request_id', '=', requestId).execute();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
