// The job runner on the database the run selected: a job runs once, per-kind
// concurrency holds, two runners never run one job twice, failures retry with backoff
// and then fail, cancel stops queued and running jobs, dedupe keys and transactions.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { scratchDatabase } from '../../test/helpers/test-server.ts';
import type { Store } from '../store/db.ts';
import { JobQueue } from './job-queue.ts';
import type { JobRunner, RunnerOptions } from './job-runner.ts';
import { gate, recordingLog, testRunner, twoStores, waitFor } from './jobs.test-support.ts';
import { JobInterrupted, PermanentJobError, jobKind, type InterruptReason, type JobStatus } from './types.ts';

interface World {
  store: Store;
  /** Another instance's store: a second pool on PostgreSQL, the same store on SQLite. */
  store2: Store;
  queue: JobQueue;
  runner(instanceId: string, options?: Partial<RunnerOptions>, queue?: JobQueue): JobRunner;
  status(id: string): Promise<JobStatus | undefined>;
}

async function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  const scratch = await scratchDatabase();
  const stores = await twoStores(scratch.url);
  const runners: JobRunner[] = [];
  const queue = new JobQueue(stores.first);
  try {
    await fn({
      store: stores.first,
      store2: stores.second,
      queue,
      runner: (id, options, q = queue) => {
        const r = testRunner(q, id, options);
        runners.push(r);
        return r;
      },
      status: async (id) => (await queue.get(id))?.status,
    });
  } finally {
    await Promise.all(runners.map((r) => r.stop(200)));
    await stores.close();
    await scratch.cleanup();
  }
}

test('a job runs once, at once on enqueue, and keeps its payload and result', async () => {
  await withWorld(async (w) => {
    const echo = jobKind<{ n: number; text: string }, never, { doubled: number }>('test.echo');
    const seen: unknown[] = [];
    // A poll interval of a minute: only the in-process nudge can start the job in time.
    const runner = w.runner('a', { pollMs: 60_000 }).handle(echo, async (ctx) => {
      seen.push({ payload: ctx.payload, attempt: ctx.attempt, progress: ctx.progress });
      return { doubled: ctx.payload.n * 2 };
    });
    await runner.start();
    const payload = { n: 21, text: 'é "quoted"\n\u2028 🙂' };
    const { id, created } = await w.queue.enqueue(echo, payload);
    assert.equal(created, true);
    await waitFor('the job succeeded', async () => (await w.status(id)) === 'succeeded');
    const job = await w.queue.get(id);
    assert.deepEqual(job?.payload, payload);
    assert.deepEqual(job?.result, { doubled: 42 });
    assert.equal(job?.attempts, 1);
    assert.equal(job?.leaseOwner, null);
    assert.equal(job?.leaseUntil, null);
    assert.deepEqual(seen, [{ payload, attempt: 1, progress: null }]);
  });
});

test('each kind runs at most its concurrency at once, and kinds do not wait for each other', async () => {
  await withWorld(async (w) => {
    const slow = jobKind<{ i: number }>('test.slow');
    const quick = jobKind<null>('test.quick');
    const release = gate();
    let active = 0;
    let maxActive = 0;
    const runner = w
      .runner('a')
      .handle(
        slow,
        async () => {
          maxActive = Math.max(maxActive, ++active);
          await release.promise;
          active--;
        },
        { concurrency: 2 },
      )
      .handle(quick, async () => 'done');
    await runner.start();
    const ids = [];
    for (let i = 0; i < 8; i++) ids.push((await w.queue.enqueue(slow, { i })).id);
    await waitFor('two slow jobs running', () => active === 2);
    // Several polls pass while both slots are taken.
    await sleep(60);
    assert.equal(maxActive, 2);
    const { id: quickId } = await w.queue.enqueue(quick, null);
    await waitFor('the quick job ran beside the full slow kind', async () => (await w.status(quickId)) === 'succeeded');
    release.open();
    for (const id of ids) await waitFor(`slow job ${id} succeeded`, async () => (await w.status(id)) === 'succeeded');
    assert.equal(maxActive, 2);
  });
});

test('two runners on one database never run one job twice', async () => {
  await withWorld(async (w) => {
    const count = jobKind<{ i: number }>('test.count');
    const runs = new Map<string, number>();
    const byRunner = { a: 0, b: 0 };
    const handler = (name: 'a' | 'b') => async (ctx: { id: string }) => {
      runs.set(ctx.id, (runs.get(ctx.id) ?? 0) + 1);
      byRunner[name]++;
      await sleep(Math.random() * 3);
    };
    // b has its own queue (and on PostgreSQL its own pool): it hears of jobs by polling only.
    const a = w.runner('instance-a').handle(count, handler('a'), { concurrency: 4 });
    const b = w.runner('instance-b', {}, new JobQueue(w.store2)).handle(count, handler('b'), { concurrency: 4 });
    await Promise.all([a.start(), b.start()]);
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push((await w.queue.enqueue(count, { i })).id);
    await waitFor(
      'every job succeeded',
      async () => (await w.store.db.selectFrom('jobs').select('id').where('status', '=', 'succeeded').execute()).length === 200,
      2_000,
    );
    assert.equal(runs.size, 200);
    assert.deepEqual([...runs.values()].filter((n) => n !== 1), [], 'each handler ran exactly once');
    const rows = await w.store.db.selectFrom('jobs').select(['attempts']).execute();
    assert.ok(rows.every((r) => r.attempts === 1));
    assert.ok(byRunner.a > 0 && byRunner.b > 0, `both runners worked: ${JSON.stringify(byRunner)}`);
  });
});

test('a failed attempt is retried after a backoff; a permanent error and the last attempt fail with last_error', async () => {
  await withWorld(async (w) => {
    const flaky = jobKind<{ failUntil: number }>('test.flaky', { maxAttempts: 3 });
    const attempts: number[] = [];
    const runner = w.runner('a').handle(
      flaky,
      async (ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.payload.failUntil === -1) throw new PermanentJobError('bad input');
        if (ctx.attempt <= ctx.payload.failUntil) throw new Error(`boom ${ctx.attempt}`);
        return 'ok';
      },
      { backoff: { baseMs: 1_000, maxMs: 1_000 } },
    );
    await runner.start();

    // One failure: queued again, 0.5 to 1 s (the base, less up to half) after it failed.
    const once = await w.queue.enqueue(flaky, { failUntil: 1 });
    await waitFor('the first attempt failed', async () => (await w.queue.get(once.id))?.lastError === 'Error: boom 1');
    const waiting = await w.queue.get(once.id);
    assert.equal(waiting?.status, 'queued');
    assert.equal(waiting?.attempts, 1);
    const delay = waiting!.runAfter - waiting!.updatedAt;
    assert.ok(delay >= 500 && delay <= 1_000, `backoff ${delay} ms`);
    assert.equal(await w.queue.reschedule({ id: once.id }, Date.now()), true);
    await waitFor('the retry succeeded', async () => (await w.status(once.id)) === 'succeeded');
    assert.equal((await w.queue.get(once.id))?.attempts, 2);

    // Always failing: three attempts, then failed with the last error.
    attempts.length = 0;
    const always = await w.queue.enqueue(flaky, { failUntil: 99 });
    for (let n = 1; n < 3; n++) {
      await waitFor(`attempt ${n} failed`, async () => (await w.queue.get(always.id))?.lastError === `Error: boom ${n}`);
      await w.queue.reschedule({ id: always.id }, Date.now());
    }
    await waitFor('the job failed', async () => (await w.status(always.id)) === 'failed');
    const failed = await w.queue.get(always.id);
    assert.equal(failed?.attempts, 3);
    assert.equal(failed?.lastError, 'Error: boom 3');
    assert.deepEqual(attempts, [1, 2, 3]);

    const permanent = await w.queue.enqueue(flaky, { failUntil: -1 });
    await waitFor('the permanent failure', async () => (await w.status(permanent.id)) === 'failed');
    const p = await w.queue.get(permanent.id);
    assert.equal(p?.attempts, 1, 'no retry after a permanent error');
    assert.equal(p?.lastError, 'PermanentJobError: bad input');
  });
});

test('a queued job is cancelled at once and never runs', async () => {
  await withWorld(async (w) => {
    const kind = jobKind<{ i: number }>('test.cancel-queued');
    const ran: number[] = [];
    const runner = w.runner('a').handle(kind, async (ctx) => void ran.push(ctx.payload.i));
    const first = await w.queue.enqueue(kind, { i: 1 });
    const second = await w.queue.enqueue(kind, { i: 2 });
    const cancelled = await w.queue.cancel(first.id);
    assert.equal(cancelled?.status, 'cancelled');
    await runner.start();
    // Oldest first: once the second has run, the first would have.
    await waitFor('the second job ran', async () => (await w.status(second.id)) === 'succeeded');
    assert.deepEqual(ran, [2]);
    assert.equal(await w.status(first.id), 'cancelled');
    assert.equal(await w.queue.cancel('job_unknown'), undefined);
  });
});

test('cancelling a running job aborts its handler, here at once and from another instance at the next renewal', async () => {
  await withWorld(async (w) => {
    const kind = jobKind<{ returns: boolean }, never, string>('test.cancel-running');
    const reasons: InterruptReason[] = [];
    const started = new Set<string>();
    const runner = w.runner('a', { renewEveryMs: 20 }).handle(
      kind,
      async (ctx) => {
        started.add(ctx.id);
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        const reason = ctx.signal.reason as JobInterrupted;
        reasons.push(reason.reason);
        if (ctx.payload.returns) return 'partial';
        throw reason;
      },
      { concurrency: 2 },
    );
    await runner.start();

    const here = await w.queue.enqueue(kind, { returns: false });
    await waitFor('running', () => started.has(here.id));
    const asked = await w.queue.cancel(here.id);
    assert.equal(asked?.status, 'running');
    assert.equal(asked?.cancelRequested, true);
    await waitFor('cancelled', async () => (await w.status(here.id)) === 'cancelled');
    const job = await w.queue.get(here.id);
    assert.equal(job?.attempts, 1, 'a cancelled job is not retried');
    assert.equal(job?.lastError, 'JobInterrupted: job interrupted: cancelled');

    // Another instance's queue: no in-process signal, the renewal brings the cancel. A
    // handler that returns after a cancel still ends cancelled, its result kept.
    const there = await w.queue.enqueue(kind, { returns: true });
    await waitFor('running', () => started.has(there.id));
    await new JobQueue(w.store2).cancel(there.id);
    await waitFor('cancelled', async () => (await w.status(there.id)) === 'cancelled');
    assert.equal((await w.queue.get(there.id))?.result, 'partial');
    assert.deepEqual(reasons, ['cancelled', 'cancelled']);
  });
});

test('a dedupe key allows one live job; enqueue in a transaction commits or rolls back with the caller', async () => {
  await withWorld(async (w) => {
    const kind = jobKind<{ n: number }>('test.dedupe');
    const release = gate();
    const runner = w.runner('a').handle(kind, async () => release.promise);
    const first = await w.queue.enqueue(kind, { n: 1 }, { dedupeKey: 'batch_1' });
    const again = await w.queue.enqueue(kind, { n: 2 }, { dedupeKey: 'batch_1' });
    assert.deepEqual(again, { id: first.id, created: false });
    await runner.start();
    await waitFor('running', async () => (await w.status(first.id)) === 'running');
    assert.equal((await w.queue.enqueue(kind, { n: 3 }, { dedupeKey: 'batch_1' })).id, first.id, 'a running job holds its key');
    release.open();
    await waitFor('done', async () => (await w.status(first.id)) === 'succeeded');
    const after = await w.queue.enqueue(kind, { n: 4 }, { dedupeKey: 'batch_1' });
    assert.equal(after.created, true, 'an ended job frees its key');

    const rolledBack = await w.queue
      .transaction(async (trx) => {
        await w.queue.enqueue(kind, { n: 5 }, { db: trx, dedupeKey: 'tx' });
        throw new Error('the caller failed');
      })
      .catch((err: Error) => err.message);
    assert.equal(rolledBack, 'the caller failed');
    assert.equal((await w.store.db.selectFrom('jobs').select('id').where('dedupe_key', '=', 'tx').execute()).length, 0);
    const committed = await w.queue.transaction((trx) => w.queue.enqueue(kind, { n: 6 }, { db: trx }));
    await waitFor('the committed job ran', async () => (await w.status(committed.id)) === 'succeeded');
  });
});

test('the logger gets a warning per failed attempt and an error for the failure', async () => {
  await withWorld(async (w) => {
    const kind = jobKind<null>('test.logged', { maxAttempts: 2 });
    const log = recordingLog();
    const runner = w.runner('a', { log }).handle(kind, async () => Promise.reject(new Error('nope')), { backoff: { baseMs: 1, maxMs: 1 } });
    await runner.start();
    const { id } = await w.queue.enqueue(kind, null);
    await waitFor('failed', async () => (await w.status(id)) === 'failed');
    assert.deepEqual(
      log.lines.map((l) => [l.level, l.msg, l.obj.job, l.obj.attempt]),
      [
        ['warn', 'job attempt failed; it will be retried', id, 1],
        ['error', 'job failed', id, 2],
      ],
    );
  });
});
