// Following a background response while it runs, from any instance (issue 25): the run
// writes its events, numbered as a live stream numbers them, to `response_events` in
// small batches (every EVENT_FLUSH_MS) and signals `response.updated`; a follower
// (GET /responses/{id}?stream=true) sends what the log holds after the last event it
// sent, then waits for the next signal, or polls when signals do not cross instances.
// Ordering gives "no duplicates, no gaps": one writer per run writes its batches in
// order, each after the previous one committed, so every read sees a prefix; the run
// writes its last batch before it stores the response's final state, so a follower that
// read a final status and then the log has every event; the final event itself
// (`response.completed` ...) is made from the stored response, by every reader alike.
// A cancel stores `cancelled` while the run may still write for a moment: a follower
// ends at what it read, and one that comes later also sees the few events written after.
// The logged events are the run's, shaped by its request's `include`; the final event
// follows the follower's own `include`, as a retrieved response does.
import type { Kysely } from 'kysely';
import type { Signals } from '../../cluster/signals.ts';
import type { Database } from '../../store/schema.ts';
import { shownResponse } from './items.ts';
import type { StreamEvent } from './output-builder.ts';
import { finalEvent, replayEvents } from './replay.ts';

/** How often a running response's new events are written (and followers told). */
export const EVENT_FLUSH_MS = 200;
/** Logged events are kept this long; after that a replay is rebuilt from the stored object. */
export const EVENT_LOG_TTL_MS = 24 * 60 * 60_000;
const SWEEP_BATCH = 500;
const RUNNING = ['queued', 'in_progress'];

type Sequenced = StreamEvent & { sequence_number: number };

export interface EventLogWarn {
  warn(obj: object, msg: string): void;
}

export class ResponseEventLog {
  constructor(
    private readonly db: Kysely<Database>,
    readonly signals: Signals,
    private readonly log: EventLogWarn,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The writer of one attempt's events; the events of any earlier attempt must be gone (reset). */
  writer(responseId: string, attempt: number): EventWriter {
    return new EventWriter(this, responseId, attempt);
  }

  /** Removes a response's events: a run starting (again) writes from 0. */
  async reset(responseId: string): Promise<void> {
    await this.db.deleteFrom('response_events').where('response_id', '=', responseId).execute();
  }

  /** The batches holding events after `after`, in order. */
  async after(responseId: string, after: number): Promise<{ attempt: number; events: Sequenced[] }[]> {
    const rows = await this.db
      .selectFrom('response_events')
      .select(['attempt', 'events'])
      .where('response_id', '=', responseId)
      .where('last_seq', '>', after)
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({ attempt: r.attempt, events: JSON.parse(r.events) as Sequenced[] }));
  }

  /** The last logged event's number; undefined when nothing is logged. */
  async lastSeq(responseId: string): Promise<number | undefined> {
    const row = await this.db.selectFrom('response_events').select((eb) => eb.fn.max('last_seq').as('last')).where('response_id', '=', responseId).executeTakeFirst();
    return row?.last === null || row?.last === undefined ? undefined : Number(row.last);
  }

  /** @internal the writer's insert */
  async insert(responseId: string, attempt: number, events: Sequenced[]): Promise<void> {
    await this.db
      .insertInto('response_events')
      .values({
        response_id: responseId,
        seq: events[0]!.sequence_number,
        last_seq: events[events.length - 1]!.sequence_number,
        attempt,
        events: JSON.stringify(events),
        created_at: this.clock(),
      })
      .execute();
    await this.signals.publish('response.updated', responseId);
  }

  /** @internal */
  warn(obj: object, msg: string): void {
    this.log.warn(obj, msg);
  }
}

/** Deletes the events written more than EVENT_LOG_TTL_MS before `now` (the stored responses' sweep); returns how many batches. */
export async function sweepResponseEvents(db: Kysely<Database>, now: number): Promise<number> {
  const before = now - EVENT_LOG_TTL_MS;
  let total = 0;
  for (;;) {
    const rows = await db.selectFrom('response_events').select('response_id').where('created_at', '<=', before).limit(SWEEP_BATCH).execute();
    if (rows.length === 0) return total;
    const r = await db
      .deleteFrom('response_events')
      .where('response_id', 'in', [...new Set(rows.map((row) => row.response_id))])
      .where('created_at', '<=', before)
      .executeTakeFirst();
    total += Number(r.numDeletedRows);
    if (rows.length < SWEEP_BATCH) return total;
  }
}

/** Numbers a run's events from 0 and writes them in batches, in order. */
export class EventWriter {
  private next = 0;
  private pending: Sequenced[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly log: ResponseEventLog,
    private readonly responseId: string,
    private readonly attempt: number,
  ) {}

  push(events: readonly StreamEvent[]): void {
    for (const e of events) this.pending.push({ ...e, sequence_number: this.next++ });
    if (this.pending.length > 0 && !this.timer) this.timer = setTimeout(() => void this.flush(), EVENT_FLUSH_MS);
  }

  /** Writes what is pending; resolves once it is written (or failed, logged: it is tried again at the next flush). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(async () => {
      const batch = this.pending;
      if (batch.length === 0) return;
      this.pending = [];
      try {
        await this.log.insert(this.responseId, this.attempt, batch);
      } catch (err) {
        // Kept, in front of what came since: a later flush writes them, still in order.
        this.pending = [...batch, ...this.pending];
        this.log.warn({ err, response_id: this.responseId }, 'writing the events of a background response failed; a follower sees them late');
      }
    });
    return this.writing;
  }
}

export interface FollowOptions {
  stored: { get(accountId: string, id: string): Promise<{ response: Record<string, any> } | undefined> };
  events: ResponseEventLog;
  accountId: string;
  id: string;
  /** Send only events numbered after this one. */
  startingAfter?: number | undefined;
  include?: readonly string[] | null | undefined;
  /** Aborted when the client has gone. */
  signal: AbortSignal;
  /** How long to wait for a signal before looking again. */
  pollMs: number;
}

/**
 * A response's events from the start (or after `startingAfter`) to its end: what its run
 * logged, then live as the run logs more, then the final event made from the stored
 * object. A response with nothing logged (not a background one, or logged too long ago)
 * is replayed from its stored object once it has ended.
 */
export async function* followResponse(o: FollowOptions): AsyncGenerator<StreamEvent> {
  let last = o.startingAfter ?? -1;
  let attempt: number | undefined;
  let woken = false;
  let wake: () => void = () => undefined;
  const unsubscribe = o.events.signals.subscribe('response.updated', (id) => {
    if (id !== o.id) return;
    woken = true;
    wake();
  });
  try {
    while (!o.signal.aborted) {
      woken = false;
      // The status first: a final one means the log read after it is complete.
      const found = await o.stored.get(o.accountId, o.id);
      if (!found) return;
      const status = String(found.response.status);
      for (const batch of await o.events.after(o.id, last)) {
        if (attempt !== undefined && batch.attempt !== attempt) {
          // The run started over (a shutdown requeued it): what was sent no longer holds.
          yield { type: 'error', code: 'server_error', message: 'The response was restarted by a restart of the service: follow it again from the start.', param: null, sequence_number: last + 1 };
          return;
        }
        attempt = batch.attempt;
        for (const e of batch.events) {
          if (e.sequence_number <= last) continue;
          yield e;
          last = e.sequence_number;
        }
      }
      if (!RUNNING.includes(status)) {
        const end = await o.events.lastSeq(o.id);
        const shown = shownResponse(found.response, o.include);
        if (end === undefined) yield* replayEvents(shown, o.startingAfter);
        else if (end + 1 > last) yield finalEvent(shown, end + 1);
        return;
      }
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          o.signal.removeEventListener('abort', done);
          wake = () => undefined;
          resolve();
        };
        const timer = setTimeout(done, o.pollMs);
        o.signal.addEventListener('abort', done, { once: true });
        wake = done;
      });
    }
  } finally {
    unsubscribe();
  }
}
