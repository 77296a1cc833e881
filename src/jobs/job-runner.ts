// Runs the jobs of the kinds registered with it. It looks for due jobs every poll
// interval, and at once when this process enqueues one or a slot frees; claims what its
// per-kind concurrency allows (job-store.ts: atomic on both databases); renews the
// leases of the jobs it runs in one statement every renewal interval, aborting a
// handler whose lease was lost or whose job was cancelled; records each outcome under
// its claim (retry with backoff, fail, succeed, reschedule a recurring job); requeues
// jobs whose lease expired, and at start those its own previous process left running.
import { backoffMs, DEFAULT_BACKOFF, type Backoff } from './backoff.ts';
import type { JobQueue } from './job-queue.ts';
import { recurringKey } from './job-queue.ts';
import type { Claim, Outcome } from './job-store.ts';
import type { JobsTable } from '../store/schema.ts';
import {
  JobInterrupted,
  PermanentJobError,
  type HandlerOptions,
  type InterruptReason,
  type JobContext,
  type JobHandler,
  type JobKind,
} from './types.ts';

export interface JobLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface RunnerOptions {
  /** Written on every lease it takes (AGENT_API_INSTANCE_ID); unique among the instances running at once. */
  instanceId: string;
  log: JobLog;
  /** How often it looks for due jobs when nothing in-process told it to; default 1000 ms. */
  pollMs?: number;
  /** How long a claim holds without renewal; default 30 s. */
  leaseMs?: number;
  /** How often leases are renewed; default a third of the lease. */
  renewEveryMs?: number;
  /** How long stop() waits for interrupted handlers; default 5 s. */
  stopGraceMs?: number;
}

interface Registered {
  kind: JobKind;
  handler: JobHandler<any, any, any>;
  concurrency: number;
  backoff: Backoff;
  /** Recurring: the one row is queued again this long after each run. */
  everyMs?: number;
  active: number;
}

interface Running {
  claim: Claim;
  registered: Registered;
  controller: AbortController;
  /** As this runner last wrote it. */
  leaseUntil: number;
  /** lost: another runner may hold it now, so nothing more is written; finishing: its outcome is being written. */
  state: 'live' | 'lost' | 'finishing';
  done: Promise<void>;
}

type Attempt = { ok: true; result: unknown } | { ok: false; error: unknown };

export class JobRunner {
  readonly instanceId: string;
  private readonly log: JobLog;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly renewEveryMs: number;
  private readonly stopGraceMs: number;
  private readonly kinds = new Map<string, Registered>();
  private readonly running = new Set<Running>();
  private state: 'new' | 'running' | 'stopping' = 'new';
  private ticking: Promise<void> | undefined;
  private again = false;
  private nudged = false;
  private timer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private renewing = false;
  private nextRecoveryAt = 0;
  private unsubscribe: (() => void) | undefined;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly queue: JobQueue,
    options: RunnerOptions,
  ) {
    this.instanceId = options.instanceId;
    this.log = options.log;
    this.pollMs = options.pollMs ?? 1_000;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.renewEveryMs = options.renewEveryMs ?? Math.max(1, Math.floor(this.leaseMs / 3));
    this.stopGraceMs = options.stopGraceMs ?? 5_000;
  }

  /** Runs jobs of `kind` with `handler`, at most `concurrency` at once in this runner. */
  handle<P, Pr, R>(kind: JobKind<P, Pr, R>, handler: JobHandler<P, Pr, R>, options: HandlerOptions = {}): this {
    const concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`job kind '${kind.name}': concurrency must be a whole number of at least 1`);
    return this.register({ kind, handler, concurrency, backoff: { ...DEFAULT_BACKOFF, ...options.backoff }, active: 0 });
  }

  /**
   * Runs `run` every `everyMs` on one instance at a time: the kind has one row (its
   * dedupe key), queued again after each run, whether it succeeded or failed (a failure
   * is logged). The first start on a database runs it at once. Register before start().
   */
  recurring<R>(kind: JobKind<null, never, R>, everyMs: number, run: JobHandler<null, never, R>): this {
    if (this.state !== 'new') throw new Error('register recurring jobs before start()');
    if (!(everyMs > 0)) throw new Error(`job kind '${kind.name}': everyMs must be positive`);
    return this.register({ kind, handler: run as JobHandler<any, any, any>, concurrency: 1, backoff: DEFAULT_BACKOFF, everyMs, active: 0 });
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('the job runner was started already');
    const now = Date.now();
    // Like the credit holds: what this instance's previous process was running will never finish.
    const recovered = await this.queue.store.recoverOwn(this.instanceId, now);
    if (recovered > 0) this.log.warn({ jobs: recovered, instance: this.instanceId }, 'requeued the jobs the previous process of this instance was running');
    for (const r of this.kinds.values()) {
      if (r.everyMs === undefined) continue;
      const key = recurringKey(r.kind);
      const { created } = await this.queue.enqueue(r.kind, null, { dedupeKey: key });
      // The interval may have got shorter since the row was scheduled.
      if (!created) await this.queue.store.pullIn(key, now + r.everyMs, now);
    }
    this.state = 'running';
    this.unsubscribe = this.queue.subscribe({ enqueued: () => this.nudge(), cancelRequested: (id) => this.cancelHere(id) });
    this.renewTimer = setInterval(() => void this.renewAll(), this.renewEveryMs).unref();
    this.wake();
  }

  /** Looks for due jobs soon (coalesced: many nudges in one turn make one look). */
  nudge(): void {
    if (this.nudged || this.state !== 'running') return;
    this.nudged = true;
    setImmediate(this.wake);
  }

  /** Jobs running in this runner now (handlers that lost their lease and have not returned included). */
  get active(): number {
    return this.running.size;
  }

  /**
   * Stops claiming, aborts the running handlers' signals (reason `shutdown`) and waits up
   * to `graceMs` for them. A handler that stops by throwing has its job queued again
   * (the attempt not counted), so another instance or the next start resumes it. One
   * still running after the grace keeps its lease until it expires: releasing it could
   * let another instance run the job at the same time.
   */
  stop(graceMs = this.stopGraceMs): Promise<void> {
    return (this.stopped ??= (async () => {
      this.state = 'stopping';
      clearTimeout(this.timer);
      this.unsubscribe?.();
      await this.ticking;
      for (const r of this.running) interrupt(r, 'shutdown');
      let timer: NodeJS.Timeout | undefined;
      const gone = Promise.allSettled([...this.running].map((r) => r.done)).then(() => true);
      const inTime = await Promise.race([gone, new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)))]);
      clearTimeout(timer);
      clearInterval(this.renewTimer);
      if (!inTime) {
        const jobs = [...this.running].map((r) => r.claim.id);
        this.log.warn({ jobs }, 'jobs still running at shutdown keep their leases until they expire');
      }
    })());
  }

  private register(r: Registered): this {
    if (this.kinds.has(r.kind.name)) throw new Error(`job kind '${r.kind.name}' has a handler already`);
    this.kinds.set(r.kind.name, r);
    this.nudge();
    return this;
  }

  private readonly wake = (): void => {
    this.nudged = false;
    if (this.state !== 'running') return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.ticking = this.tick()
      .catch((err: unknown) => this.log.warn({ err }, 'looking for due jobs failed'))
      .finally(() => {
        this.ticking = undefined;
        if (this.state !== 'running') return;
        if (this.again) {
          this.again = false;
          this.nudge();
        } else this.timer = setTimeout(this.wake, this.pollMs).unref();
      });
  };

  private async tick(): Promise<void> {
    const now = Date.now();
    this.expireLocally(now);
    if (now >= this.nextRecoveryAt) {
      this.nextRecoveryAt = now + Math.max(this.pollMs, this.renewEveryMs);
      const recovered = await this.queue.store.recoverExpired(now);
      if (recovered > 0) this.log.warn({ jobs: recovered }, 'recovered jobs whose lease expired (queued again, or failed with no attempt left)');
    }
    const free = [...this.kinds.values()].filter((r) => r.active < r.concurrency);
    if (!(await this.queue.store.anyDue(free.map((r) => r.kind.name), now))) return;
    for (const r of free) {
      const room = r.concurrency - r.active;
      if (this.state !== 'running' || room <= 0) continue;
      const rows = await this.queue.store.claim(r.kind.name, room, this.instanceId, Date.now(), this.leaseMs);
      for (const row of rows) this.launch(r, row);
      // A full batch: more may be due.
      if (rows.length === room) this.again = true;
    }
  }

  private launch(registered: Registered, row: JobsTable): void {
    const entry = {
      claim: { id: row.id, owner: this.instanceId, attempt: row.attempts },
      registered,
      controller: new AbortController(),
      leaseUntil: row.lease_until ?? 0,
      state: 'live',
    } as Running;
    registered.active++;
    this.running.add(entry);
    // Claimed by a look that stop() outlived: hand it straight back.
    if (this.state !== 'running') interrupt(entry, 'shutdown');
    entry.done = this.execute(entry, row).finally(() => {
      registered.active--;
      this.running.delete(entry);
      this.nudge();
    });
  }

  private async execute(entry: Running, row: JobsTable): Promise<void> {
    let attempt: Attempt;
    try {
      const ctx: JobContext<unknown, unknown> = {
        id: row.id,
        kind: row.kind,
        payload: JSON.parse(row.payload),
        accountId: row.account_id,
        attempt: row.attempts,
        maxAttempts: row.max_attempts,
        progress: row.progress === null ? null : JSON.parse(row.progress),
        signal: entry.controller.signal,
        checkpoint: (progress) => this.checkpoint(entry, progress),
      };
      attempt = { ok: true, result: await entry.registered.handler(ctx) };
    } catch (error) {
      attempt = { ok: false, error };
    }
    if (entry.state === 'lost') {
      this.log.warn({ job: row.id, kind: row.kind, attempt: row.attempts }, 'a job ended after its lease was lost; its outcome is not recorded');
      return;
    }
    entry.state = 'finishing';
    try {
      const written = await this.queue.store.finish(entry.claim, this.outcome(entry, row, attempt), Date.now());
      if (!written) this.log.warn({ job: row.id, kind: row.kind, attempt: row.attempts }, 'a job ended after its lease was lost; its outcome is not recorded');
    } catch (err) {
      // The lease runs out and the job is recovered like a crashed instance's.
      this.log.error({ err, job: row.id, kind: row.kind }, 'recording a job outcome failed');
    }
  }

  private outcome(entry: Running, row: JobsTable, attempt: Attempt): Outcome {
    const now = Date.now();
    const { registered } = entry;
    const log = { job: row.id, kind: row.kind, attempt: row.attempts };
    if (attempt.ok) {
      const result = toJson(attempt.result);
      if (result.ok) {
        return registered.everyMs === undefined
          ? { type: 'succeeded', result: result.json }
          : { type: 'rescheduled', runAfter: now + registered.everyMs, error: null, result: result.json };
      }
      attempt = { ok: false, error: new PermanentJobError(`the result is not JSON: ${result.error}`) };
    }
    const { error } = attempt;
    const reason = interruptedBy(entry.controller.signal);
    if (reason === 'shutdown') return { type: 'released' };
    const message = describe(error);
    if (registered.everyMs !== undefined) {
      this.log.error({ ...log, err: error }, `${row.kind} failed`);
      return { type: 'rescheduled', runAfter: now + registered.everyMs, error: message, result: null };
    }
    if (reason === 'cancelled') return { type: 'failed', error: message };
    if (error instanceof PermanentJobError || row.attempts >= row.max_attempts) {
      this.log.error({ ...log, err: error }, 'job failed');
      return { type: 'failed', error: message };
    }
    const delay = backoffMs(row.attempts, registered.backoff);
    this.log.warn({ ...log, err: error, retry_in_ms: delay }, 'job attempt failed; it will be retried');
    return { type: 'retry', error: message, runAfter: now + delay };
  }

  private async checkpoint(entry: Running, progress: unknown): Promise<void> {
    if (entry.state === 'lost') throw new JobInterrupted('lease-lost');
    const now = Date.now();
    const held = await this.queue.store.checkpoint(entry.claim, JSON.stringify(progress ?? null), now, this.leaseMs);
    if (!held) {
      this.lose(entry, 'its checkpoint found the lease gone');
      throw new JobInterrupted('lease-lost');
    }
    if (entry.state === 'live') entry.leaseUntil = now + this.leaseMs;
    if (held.cancel_requested === 1) interrupt(entry, 'cancelled');
  }

  private async renewAll(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      const now = Date.now();
      this.expireLocally(now);
      const held = [...this.running].filter((r) => r.state === 'live');
      if (held.length === 0) return;
      let rows;
      try {
        rows = await this.queue.store.renew(this.instanceId, held.map((r) => r.claim.id), now, this.leaseMs);
      } catch (err) {
        // Not lost yet: expireLocally() gives up on a lease once it has run out.
        this.log.warn({ err }, 'renewing job leases failed');
        return;
      }
      const renewed = new Map(rows.map((r) => [r.id, r]));
      for (const r of held) {
        if (r.state !== 'live') continue; // finished meanwhile
        const row = renewed.get(r.claim.id);
        if (!row || row.attempts !== r.claim.attempt) {
          this.lose(r, 'its renewal was refused');
          continue;
        }
        r.leaseUntil = now + this.leaseMs;
        if (row.cancel_requested === 1) interrupt(r, 'cancelled');
      }
    } finally {
      this.renewing = false;
    }
  }

  /** A lease not renewed in time may be another runner's already (its recovery does not ask us). */
  private expireLocally(now: number): void {
    for (const r of this.running) if (r.state === 'live' && r.leaseUntil < now) this.lose(r, 'it was not renewed in time');
  }

  private lose(entry: Running, why: string): void {
    if (entry.state !== 'live') return;
    entry.state = 'lost';
    this.log.warn({ job: entry.claim.id, kind: entry.registered.kind.name, attempt: entry.claim.attempt }, `lost the lease of a running job: ${why}; stopping it`);
    interrupt(entry, 'lease-lost');
  }

  private cancelHere(id: string): void {
    for (const r of this.running) if (r.claim.id === id && r.state === 'live') interrupt(r, 'cancelled');
  }
}

function interrupt(entry: Running, reason: InterruptReason): void {
  if (!entry.controller.signal.aborted) entry.controller.abort(new JobInterrupted(reason));
}

function interruptedBy(signal: AbortSignal): InterruptReason | undefined {
  return signal.aborted && signal.reason instanceof JobInterrupted ? signal.reason.reason : undefined;
}

function toJson(value: unknown): { ok: true; json: string | null } | { ok: false; error: string } {
  try {
    return { ok: true, json: value === undefined ? null : (JSON.stringify(value) ?? null) };
  } catch (err) {
    return { ok: false, error: describe(err) };
  }
}

/** The error as kept in last_error: its message, bounded. */
function describe(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text;
}
